#!/usr/bin/env node
// False positives of the product-code checks (harness_reach, runner_detection) on honest upstream
// commits. For the last N non-merge commits of each repository, the changed product source files
// (Python and JS/TS, outside test, docs, example, build and vendor directories, and not test or
// config files by name) are read at the first parent and at the commit, and harnessReachFindings
// and runnerDetectionFindings run on them. Prints, per repository, the commits, files and added
// lines examined and the findings per check, a total, then every finding with its commit,
// file:line, class and line. Every finding is a candidate false positive: the commits are ordinary
// upstream work. The repositories are not in this repo: bring bare or normal clones here, then
//   npx tsc -p tsconfig.json && node scripts/bench-harness-reach.mjs [-n 150] [git-dir ...]
// (-n 100000 reads whole histories: 26k commits of the default list in about 45 s.)
// Without git dirs it reads the default list below (the /work/.mirror bare clones); those missing
// are skipped, and when none exists it says so and exits 0.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const DEFAULT_REPOS = [
  'pallets/click',
  'more-itertools/more-itertools',
  'psf/requests',
  'pallets/flask',
  'encode/httpx',
  'pallets/jinja',
  'python-attrs/attrs',
  'tj/commander.js',
  'expressjs/express',
  'unjs/ufo',
  'sindresorhus/ky',
  'chalk/chalk',
].map((repo) => `/work/.mirror/${repo.replace('/', '+')}/repo`);

const args = process.argv.slice(2);
let count = 150;
const countAt = args.findIndex((arg) => arg === '-n' || arg === '--commits');
if (countAt >= 0) {
  count = Number(args[countAt + 1]);
  args.splice(countAt, 2);
}
if (!Number.isInteger(count) || count < 1) {
  console.log('usage: node scripts/bench-harness-reach.mjs [-n commits] [git-dir ...]');
  process.exit(2);
}
const given = args.length > 0 ? args : DEFAULT_REPOS;
const gitDirs = given.map(gitDirOf).filter((dir) => dir !== undefined);
const missing = given.filter((dir) => gitDirOf(dir) === undefined);
if (missing.length > 0) console.log(`Skipped (no git dir): ${missing.join(', ')}`);
if (gitDirs.length === 0) {
  console.log('No repositories found (fetch or clone them first; nothing was run).');
  process.exit(0);
}

const { harnessReachFindings } = await import('../dist/integrity/harness-reach.js');
const { runnerDetectionFindings } = await import('../dist/integrity/runner-detection.js');
const CHECKS = [
  ['harness_reach', harnessReachFindings],
  ['runner_detection', runnerDetectionFindings],
];

const SOURCE = /\.(?:py|js|mjs|cjs|ts|tsx|jsx|rs|go)$/;
// Beyond the usual test directories and names: in-package test suites (flask/testsuite, spec/),
// tests.py, *_tests.py, run-tests.py and test.js, which old upstream history holds.
const SKIPPED_DIRS = new Set(
  (
    'test tests __tests__ testing testsuite spec docs doc examples example benchmarks bench ' +
    'scripts node_modules dist build vendor'
  ).split(' '),
);
const SKIPPED_NAMES = new RegExp(
  '^(?:test_.*\\.py|.*_test\\.go|.*_tests?\\.py|tests\\.py|run-tests\\.py|test\\.[cm]?[jt]sx?|.*\\.test\\..*|' +
    '.*\\.spec\\..*|conftest\\.py|.*\\.config\\..*|setup\\.py|noxfile\\.py)$',
);

/** Whether a repository-relative path is product source, by extension, directories and name. */
function isProductSource(file) {
  const parts = file.split('/');
  const name = parts.pop();
  return SOURCE.test(name) && !SKIPPED_NAMES.test(name) && !parts.some((d) => SKIPPED_DIRS.has(d));
}

/** The git dir of a bare or normal clone, or undefined. */
function gitDirOf(dir) {
  if (existsSync(path.join(dir, '.git'))) return path.join(dir, '.git');
  if (existsSync(path.join(dir, 'HEAD')) && existsSync(path.join(dir, 'objects'))) return dir;
  return undefined;
}

/** owner/name for a /work/.mirror/owner+name/repo path, else the directory's name. */
function labelOf(gitDir) {
  const parts = path
    .resolve(gitDir)
    .split(path.sep)
    .filter((part) => part !== '.git');
  const last = parts.at(-1);
  return last === 'repo' ? parts.at(-2).replace('+', '/') : last;
}

const git = (gitDir, ...rest) =>
  execFileSync('git', ['--git-dir', gitDir, '-c', 'core.quotePath=false', ...rest], {
    maxBuffer: 1 << 30,
  }).toString();

/** The last `count` non-merge commits with their first parent and changed product files. */
function commitsOf(gitDir) {
  const log = git(
    gitDir,
    'log',
    '--no-merges',
    '--no-renames',
    `-n${count}`,
    '--name-status',
    '--format=%x01%H %P',
  );
  return log
    .split('\x01')
    .slice(1)
    .map((chunk) => {
      const [head, ...rest] = chunk.split('\n');
      const [commit, parent] = head.trim().split(' ');
      const files = rest
        .map((line) => line.split('\t'))
        .filter(([status, file]) => file && /^[AM]/.test(status) && isProductSource(file))
        .map(([status, file]) => ({ file, added: status.startsWith('A') }));
      return { commit, parent, files };
    });
}

/** The texts of `rev:path` names in one `git cat-file --batch` (undefined when missing). */
function readBlobs(gitDir, names) {
  if (names.length === 0) return [];
  const run = spawnSync('git', ['--git-dir', gitDir, 'cat-file', '--batch'], {
    input: names.map((name) => `${name}\n`).join(''),
    maxBuffer: 1 << 30,
  });
  if (run.status !== 0) throw new Error(`git cat-file failed: ${run.stderr}`);
  const out = run.stdout;
  const texts = [];
  let at = 0;
  for (let index = 0; index < names.length; index += 1) {
    const end = out.indexOf(10, at);
    const header = out.subarray(at, end).toString();
    at = end + 1;
    const blob = /^[0-9a-f]+ blob (\d+)$/.exec(header);
    if (!blob) {
      texts.push(undefined); // "<name> missing" or not a blob: no content follows
      continue;
    }
    const size = Number(blob[1]);
    texts.push(out.subarray(at, at + size).toString('utf8'));
    at += size + 1;
  }
  return texts;
}

/** The class of a finding: the text before the first ':' of its detail, or what it reads. */
function classOf(finding) {
  const named = /^(\w+):/.exec(finding.detail);
  if (named) return named[1];
  const reads = /^product code reads (.+?) \(`/.exec(finding.detail);
  return reads ? reads[1] : finding.detail.split(':')[0];
}

/** Lines of the file's new text that the checks read as added (not in the base, trimmed). */
function addedLines({ base, now }) {
  if (now === undefined) return 0;
  const before = new Set((base ?? '').split(/\r?\n/).map((line) => line.trim()));
  return now.split(/\r?\n/).filter((line) => line.trim() !== '' && !before.has(line.trim())).length;
}

const clip = (text, width) => (text.length > width ? `${text.slice(0, width - 1)}…` : text);

const cell = (value, width) => String(value).padStart(width);
const row = (repo, counts) =>
  console.log(
    `  ${repo.padEnd(30)}${cell(counts.commits, 8)}${cell(counts.files, 7)}` +
      `${cell(counts.lines, 8)}${cell(counts.harness_reach, 9)}${cell(counts.runner_detection, 8)}`,
  );

const listed = [];
const totals = { commits: 0, files: 0, lines: 0, harness_reach: 0, runner_detection: 0 };
console.log(`Last ${count} non-merge commits per repository (product source files changed)\n`);
console.log(`  ${'repository'.padEnd(30)} commits  files   added  harness  runner`);
for (const gitDir of gitDirs) {
  const repo = labelOf(gitDir);
  const commits = commitsOf(gitDir);
  const names = [];
  for (const { commit, parent, files } of commits)
    for (const { file, added } of files) {
      if (parent && !added) names.push(`${parent}:${file}`);
      names.push(`${commit}:${file}`);
    }
  const blobs = readBlobs(gitDir, names);
  const at = new Map(names.map((name, index) => [name, index]));
  const text = (name) => (at.has(name) ? blobs[at.get(name)] : undefined);
  const counts = { files: 0, lines: 0, harness_reach: 0, runner_detection: 0 };
  for (const { commit, parent, files } of commits) {
    const productCode = files.map(({ file, added }) => ({
      path: file,
      base: parent && !added ? text(`${parent}:${file}`) : undefined,
      now: text(`${commit}:${file}`),
    }));
    counts.files += productCode.length;
    counts.lines += productCode.reduce((total, file) => total + addedLines(file), 0);
    for (const [kind, check] of CHECKS)
      for (const finding of check(productCode)) {
        counts[kind] += 1;
        const now = productCode.find((item) => item.path === finding.file)?.now ?? '';
        const line = now.split(/\r?\n/)[finding.line - 1]?.trim() ?? '';
        listed.push({ repo, commit, kind, finding, line });
      }
  }
  row(repo, { commits: commits.length, ...counts });
  totals.commits += commits.length;
  totals.files += counts.files;
  totals.lines += counts.lines;
  totals.harness_reach += counts.harness_reach;
  totals.runner_detection += counts.runner_detection;
}
row('total', totals);

for (const [kind] of CHECKS) {
  const mine = listed.filter((item) => item.kind === kind);
  console.log(`\n${kind} findings (${mine.length}):`);
  for (const { repo, commit, finding, line } of mine) {
    const where = `${finding.file}:${finding.line}`;
    console.log(`  ${repo} ${commit.slice(0, 10)} ${where} [${classOf(finding)}]`);
    console.log(`      ${clip(line, 92)}`);
  }
}
