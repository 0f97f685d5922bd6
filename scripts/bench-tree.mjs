#!/usr/bin/env node
// What a turn reads and writes of the whole tree, each as a ratio of its floor measured in the same
// process, alternating:
// - the tree fingerprint (src/repo/fingerprint.ts) that ties every run, approval and gate to its
//   tree, taken before and after each run and at the verdict, against git's listing of the tree
//   then one synchronous read and sha256 of each listed file;
// - the four snapshots a turn's trusted runs need (base, trusted, fail-to-pass, new tests;
//   src/evaluation/snapshot.ts), against the same four trees made with standard tools: one
//   `git archive | tar -x` of the base, then three `cp -a` of it.
// Trees: this repository, and three installed packages committed as a project (the MCP SDK's dist,
// zod, TypeScript's lib: about 1,700 files and 34 MB, two files over 8 MB). Medians after one
// warm-up, with their range. Needs a build first (`npx tsc -p .`).
// `node scripts/bench-tree.mjs [--reps=N]` (default 9; 5 for the snapshots).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { trustedSelection } from '../dist/scope/product-code.js';
import { baseSnapshot, failToPassSnapshot, trustedSnapshot } from '../dist/evaluation/snapshot.js';
import { treeFingerprint } from '../dist/repo/fingerprint.js';
import { listWorkingFiles } from '../dist/repo/git.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPS = Number(/--reps=(\d+)/.exec(process.argv.join(' '))?.[1] ?? 9);
const SNAPSHOT_REPS = Math.min(REPS, 5);
const PACKAGES = ['@modelcontextprotocol/sdk/dist', 'zod', 'typescript/lib'];

const git = (dir, ...args) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();

function packagesProject() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-tree-'));
  for (const name of PACKAGES)
    cpSync(path.join(ROOT, 'node_modules', name), path.join(dir, 'vendor', name), {
      recursive: true,
    });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '.');
  git(dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-qm', 'v');
  return dir;
}

async function readEachFile(dir) {
  const files = await listWorkingFiles(dir);
  let bytes = 0;
  for (const file of files) {
    const content = readFileSync(path.join(dir, file));
    bytes += content.length;
    createHash('sha256').update(content).digest('hex');
  }
  return { files: files.length, bytes };
}

/**
 * The four snapshots prepareTrustedRuns makes for a turn that changed code and added tests (the
 * tree is the commit, so nothing is laid over the copies), and their removal.
 */
async function turnSnapshots(dir) {
  const commit = git(dir, 'rev-parse', 'HEAD');
  const selection = await trustedSelection(dir, commit);
  const base = await baseSnapshot(dir, commit);
  const others = await Promise.all([
    trustedSnapshot(dir, base, selection),
    failToPassSnapshot(dir, base),
    trustedSnapshot(dir, base, selection, true),
  ]);
  await Promise.all([base, ...others].map((snapshot) => snapshot.remove()));
}

/** The same four trees by standard tools (`git archive | tar -x`, three `cp -a`), removed. */
function archiveAndCopies(dir) {
  const target = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-archive-'));
  const extract = `mkdir "${target}/0" && git archive --format=tar HEAD | tar -x -C "${target}/0"`;
  const copies = `for n in 1 2 3; do cp -a "${target}/0" "${target}/$n"; done`;
  execFileSync('sh', ['-c', `${extract} && ${copies}`], { cwd: dir });
  rmSync(target, { recursive: true, force: true });
}

async function timed(work) {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const range = (values, digits) => {
  const show = (value) => value.toFixed(digits);
  return `${show(median(values))} (${show(Math.min(...values))}–${show(Math.max(...values))})`;
};

/** Alternating pairs of `work` and its `floor`, after one warm-up of each. */
async function pairs(dir, work, floor, reps) {
  await floor(dir);
  await work(dir);
  const floors = [];
  const works = [];
  for (let rep = 0; rep < reps; rep += 1) {
    if (rep % 2 === 0) floors.push(await timed(() => floor(dir)));
    works.push(await timed(() => work(dir)));
    if (rep % 2 === 1) floors.push(await timed(() => floor(dir)));
  }
  const ratio = `${range(
    works.map((ms, rep) => ms / floors[rep]),
    2,
  )}×`;
  return { floor: range(floors, 0), work: range(works, 0), ratio };
}

async function rows(name, dir) {
  const size = await readEachFile(dir);
  const label = `${name} (${size.files} files, ${(size.bytes / 1e6).toFixed(1)} MB)`;
  const fingerprint = await pairs(dir, treeFingerprint, readEachFile, REPS);
  const snapshots = await pairs(dir, turnSnapshots, archiveAndCopies, SNAPSHOT_REPS);
  return [
    { tree: label, what: 'fingerprint', ...fingerprint },
    { tree: label, what: 'four snapshots', ...snapshots },
  ].map(({ tree, what, floor, work, ratio }) => ({
    tree,
    what,
    'floor ms': floor,
    ms: work,
    ratio,
  }));
}

const project = packagesProject();
try {
  const table = [...(await rows('this repository', ROOT)), ...(await rows('packages', project))];
  console.log(
    'Whole-tree reads and writes against their floors: the fingerprint against listing, reading ' +
      'and hashing each file; four snapshots against git archive | tar -x and three cp -a ' +
      `(node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}):`,
  );
  console.table(table);
} finally {
  rmSync(project, { recursive: true, force: true });
}
