#!/usr/bin/env node
// The borrowed environment verified by content: first (cold digest cache, a fresh process) and
// cached verification of a real node_modules, and the RECORD verification of a real virtualenv,
// each as a ratio of a bare stat walk of the same tree (readdir + lstat, no hashing) measured in
// the same process. Trees: this repository's node_modules, a fresh `npm ci` of this repository's
// lockfile (new inodes, npm's cache), and a virtualenv made by `python3 -m venv` (pip installed
// from ensurepip's wheel). Target: cached re-verification under 1 s for 30,000 files. Needs a build
// first (`npx tsc -p .`). `node scripts/bench-environment.mjs [--reps=N]`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPS = Number(/--reps=(\d+)/.exec(process.argv.join(' '))?.[1] ?? 3);
const CACHED_CALLS = 5;

/** One measurement in a fresh process, so the first verification finds the digest cache empty. */
async function measure(kind, dir) {
  const { nodeModulesProblems } = await import('../dist/evaluation/node-modules-integrity.js');
  const { nodeModulesContent } = await import('../dist/repo/node-modules.js');
  const { plantedEnvironment } = await import('../dist/evaluation/planted-environment.js');
  const walked = path.join(dir, kind === 'venv' ? '.venv' : 'node_modules');
  const bare = timed(() => statWalk(walked));
  // The first call hashes every file (the lock and .bin checks too); the pin's record is then taken
  // from the warm cache, and each later call compares the tree with it as an approval does.
  const first = await timedAsync(() =>
    kind === 'venv' ? plantedEnvironment(dir) : nodeModulesProblems(dir, undefined),
  );
  const pinned = kind === 'venv' ? undefined : await nodeModulesContent(dir);
  const verify = () =>
    kind === 'venv' ? plantedEnvironment(dir) : nodeModulesProblems(dir, pinned);
  const cached = [];
  for (let call = 0; call < CACHED_CALLS; call += 1) cached.push(await timedAsync(verify));
  return {
    files: pinned ? Object.keys(pinned).length : bare.value,
    bare: bare.ms,
    first: first.ms,
    cached: median(cached.map((call) => call.ms)),
    found: first.value.map((item) => `${item.file} — ${item.problem}`),
  };
}

function statWalk(directory) {
  let count = 0;
  const pending = [directory];
  while (pending.length > 0) {
    const current = pending.pop();
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const file = path.join(current, entry.name);
      lstatSync(file);
      if (entry.isDirectory()) pending.push(file);
      else count += 1;
    }
  }
  return count;
}

function timed(work) {
  const started = performance.now();
  const value = work();
  return { value, ms: performance.now() - started };
}

async function timedAsync(work) {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

if (process.argv[2] === '--child') {
  process.stdout.write(JSON.stringify(await measure(process.argv[3], process.argv[4])));
  process.exit(0);
}

function child(kind, dir) {
  const output = execFileSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--child', kind, dir],
    {
      encoding: 'utf8',
      maxBuffer: 1 << 20,
    },
  );
  return JSON.parse(output);
}

function freshInstall() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-npm-ci-'));
  for (const file of ['package.json', 'package-lock.json'])
    copyFileSync(path.join(ROOT, file), path.join(dir, file));
  execFileSync('npm', ['ci', '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: 'ignore',
  });
  return dir;
}

function virtualenv() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-venv-'));
  execFileSync('python3', ['-m', 'venv', '.venv'], { cwd: dir, stdio: 'ignore' });
  return dir;
}

const range = (values, digits = 0) => {
  const sorted = [...values].sort((a, b) => a - b);
  const show = (value) => value.toFixed(digits);
  return `${show(median(sorted))} (${show(sorted[0])}–${show(sorted.at(-1))})`;
};

function report(name, dir, kind) {
  const runs = Array.from({ length: REPS }, () => child(kind, dir));
  const { files, found } = runs[0];
  console.log(`${name}: ${files} files, load ${os.loadavg()[0].toFixed(1)}`);
  for (const finding of found) console.log(`  finding: ${finding}`);
  console.log(`  bare stat walk        ${range(runs.map((run) => run.bare))} ms`);
  console.log(
    `  first verification    ${range(runs.map((run) => run.first))} ms = ${range(
      runs.map((run) => run.first / run.bare),
      1,
    )}× the walk`,
  );
  console.log(
    `  cached verification   ${range(runs.map((run) => run.cached))} ms = ${range(
      runs.map((run) => run.cached / run.bare),
      1,
    )}× the walk` +
      (kind === 'npm'
        ? `, ${range(runs.map((run) => (run.cached / run.files) * 30_000))} ms per 30,000 files (target < 1000)`
        : ''),
  );
}

const made = [];
try {
  report("this repository's node_modules", ROOT, 'npm');
  const installed = freshInstall();
  made.push(installed);
  report("a fresh npm ci of this repository's lockfile", installed, 'npm');
  const venv = virtualenv();
  made.push(venv);
  report('a python3 -m venv virtualenv (RECORD verification)', venv, 'venv');
} finally {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
}
