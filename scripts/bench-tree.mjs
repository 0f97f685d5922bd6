#!/usr/bin/env node
// The tree fingerprint (src/repo/fingerprint.ts) that ties every run, approval and gate to its tree,
// as a ratio of its floor measured in the same process: git's listing of the tree, then one
// synchronous read and sha256 of each listed file. A turn takes several (before and after each run,
// at the verdict). Trees: this repository, and three installed packages committed as a project
// (the MCP SDK's dist, zod, TypeScript's lib: about 1,700 files and 38 MB, two files over 8 MB).
// Medians of the calls after one warm-up, with their range. Needs a build first (`npx tsc -p .`).
// `node scripts/bench-fingerprint.mjs [--reps=N]` (default 9).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { treeFingerprint } from '../dist/repo/fingerprint.js';
import { listWorkingFiles } from '../dist/repo/git.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPS = Number(/--reps=(\d+)/.exec(process.argv.join(' '))?.[1] ?? 9);
const PACKAGES = ['@modelcontextprotocol/sdk/dist', 'zod', 'typescript/lib'];

function packagesProject() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-fingerprint-'));
  for (const name of PACKAGES)
    cpSync(path.join(ROOT, 'node_modules', name), path.join(dir, 'vendor', name), {
      recursive: true,
    });
  const git = (...args) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', 'commit', '-qm', 'v');
  return dir;
}

async function floor(dir) {
  const files = await listWorkingFiles(dir);
  let bytes = 0;
  for (const file of files) {
    const content = readFileSync(path.join(dir, file));
    bytes += content.length;
    createHash('sha256').update(content).digest('hex');
  }
  return { files: files.length, bytes };
}

async function timed(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const range = (values, digits) => {
  const show = (value) => value.toFixed(digits);
  return `${show(median(values))} (${show(Math.min(...values))}–${show(Math.max(...values))})`;
};

async function row(name, dir) {
  await floor(dir);
  await treeFingerprint(dir);
  const floors = [];
  const fingerprints = [];
  let size;
  for (let rep = 0; rep < REPS; rep += 1) {
    // Which goes first alternates, so the page cache and the machine's load fall on both alike.
    const pair = rep % 2 === 0 ? [floor, treeFingerprint] : [treeFingerprint, floor];
    for (const work of pair) {
      const { value, ms } = await timed(() => work(dir));
      (work === floor ? floors : fingerprints).push(ms);
      if (work === floor) size = value;
    }
  }
  return {
    tree: name,
    files: size.files,
    MB: (size.bytes / 1e6).toFixed(1),
    'floor ms': range(floors, 1),
    'fingerprint ms': range(fingerprints, 1),
    ratio: `${range(
      fingerprints.map((ms, rep) => ms / floors[rep]),
      2,
    )}×`,
  };
}

const project = packagesProject();
try {
  const rows = [await row('this repository', ROOT), await row('three packages', project)];
  console.log(
    `Tree fingerprint against listing + reading + hashing each file (node ${process.version}, ` +
      `${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, ${REPS} calls each):`,
  );
  console.table(rows);
} finally {
  rmSync(project, { recursive: true, force: true });
}
