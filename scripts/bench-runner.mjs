#!/usr/bin/env node
// Runner overhead: each suite run through coachgate's run_independent_tests action (detection, report
// flags, output capture, tree fingerprints before and after, parsing) against the same command run raw,
// in this same session. Raw and served runs alternate, so machine load hits both sides alike, and
// each round's served run is compared with its own raw run: the median of those rounds is printed,
// with their range (a best-of figure pairs a lucky raw run with an unlucky served one).
// The raw command is the served one without coachgate's reporter. Targets (issue 31): ≤ +60 ms on
// the trivial suite, ≤ 1.05× on the others.
// Needs a build first: `npx tsc -p .`, then `node scripts/bench-runner.mjs [--rounds=N] [filter]`
// (default 7 rounds, twice as many for the pytest suites, six times for the trivial one;
// `node scripts/bench-runner.mjs node` runs the suites whose name holds "node"). `--instructions`
// counts the pytest suites' instructions instead, with valgrind (a few minutes; skipped where
// valgrind is not installed).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runIndependentTests } from '../dist/actions/run-independent-tests.js';
import { initKey } from '../dist/records/keys.js';

// As `coachgate serve` does at start: the runs are signed, and nothing creates the key on first use.
await initKey();

const options = process.argv.slice(2);
const ROUNDS = Number(options.map((arg) => /^--rounds=(\d+)$/.exec(arg)?.[1]).find(Boolean) ?? 7);
const FILTER = options.find((arg) => !arg.startsWith('--')) ?? '';
const INSTRUCTIONS = options.includes('--instructions');

const SUITES = [
  {
    name: 'pytest, one test sleeping 1 s',
    files: {
      'pytest.ini': '[pytest]\n',
      'tests/test_slow.py': 'import time\n\ndef test_slow():\n    time.sleep(1)\n',
    },
    raw: ['python3', '-m', 'pytest', '-p', 'no:cacheprovider'],
    // Twice the rounds: a pytest start's CPU time here moves from 1.3 to 1.7 s between runs, and
    // the medians of 7 rounds of one tree read 1.02x to 1.06x within a day. Counted in
    // instructions too (the sleep is not: the ratio counts the start and the reporter alone).
    roundsFactor: 2,
    instructions: true,
  },
  {
    name: 'pytest, 2,000 tests',
    files: {
      'pytest.ini': '[pytest]\n',
      'tests/test_many.py':
        'import pytest\n\n@pytest.mark.parametrize("n", range(2000))\ndef test_many(n):\n    assert n >= 0\n',
    },
    raw: ['python3', '-m', 'pytest', '-p', 'no:cacheprovider'],
    // Its ratio is within this VM's noise: --instructions counts it too. Six times the rounds: a
    // round's ratio here spans 0.90x to 1.22x, and medians of 14 rounds of one tree read 1.02x
    // to 1.06x within a day.
    instructions: true,
    roundsFactor: 6,
  },
  {
    name: 'node --test, one trivial test',
    files: {
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'test/trivial.test.js': "import test from 'node:test';\ntest('trivial', () => {});\n",
    },
    raw: ['node', '--test'],
    // A third of a second a run: six times the rounds cost little and steady the median (four
    // runs of 45 rounds on one tree gave +54 to +60 ms).
    roundsFactor: 6,
  },
];

function gitRepository(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-runner-'));
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), content);
  }
  const git = (...args) => spawnSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git(
    '-c',
    'user.name=bench',
    '-c',
    'user.email=bench@example.invalid',
    '-c',
    'commit.gpgsign=false',
    'commit',
    '-q',
    '-m',
    'suite',
  );
  return dir;
}

/**
 * The interpreter behind `python3`: the served run looks past a version manager's shim (pyenv's
 * is a bash script costing about 0.3 s a start, src/runner/pyenv.ts), so the raw run starts the
 * same interpreter directly; through the shim the raw side would pay what coachgate saves.
 */
const PYTHON =
  spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], {
    encoding: 'utf8',
  }).stdout?.trim() || 'python3';

/** The raw runs' environment, read at each run: as the served run sets it, no bytecode written. */
const rawEnvironment = () => ({ ...process.env, PYTHONDONTWRITEBYTECODE: '1' });

function rawRun(dir, argv) {
  const start = performance.now();
  const program = argv[0] === 'python3' ? PYTHON : argv[0];
  const result = spawnSync(program, argv.slice(1), {
    cwd: dir,
    stdio: 'ignore',
    env: rawEnvironment(),
  });
  if (result.status !== 0) throw new Error(`raw run of ${argv.join(' ')} exited ${result.status}`);
  return performance.now() - start;
}

/** run_independent_tests of the suite, which must pass: its run record. */
async function passingRun(dir, request = {}) {
  const record = await runIndependentTests(dir, request);
  if (record.status !== 'passed')
    throw new Error(`served run in ${dir} was ${record.status}: ${record.summary}`);
  return record;
}

async function servedRun(dir) {
  const start = performance.now();
  await passingRun(dir);
  return performance.now() - start;
}

/**
 * Instructions, not time, for the suites marked so: on this VM one command's own runs differ by a
 * third, which hides a few percent. callgrind counts what the test processes execute (repeats
 * agree within 0.3 %). The suite gets a project virtualenv whose `python` starts the real
 * interpreter under valgrind, so the served run (in its sandbox, with coachgate's reporter) and the
 * raw one are counted alike, side by side. Bubblewrap's start and the server's own work are not
 * counted: the trivial suite's milliseconds are that fixed cost.
 */
async function instructionRow(suite) {
  const dir = gitRepository({ ...suite.files, '.gitignore': '.venv/\n' });
  const python = path.join(dir, '.venv', 'bin', 'python');
  fs.mkdirSync(path.dirname(python), { recursive: true });
  const valgrind = 'valgrind --tool=callgrind --callgrind-out-file=/dev/null';
  fs.writeFileSync(python, `#!/bin/sh\nexec ${valgrind} "${PYTHON}" "$@"\n`, { mode: 0o755 });
  // The same hash seed on both sides (the served run inherits this environment).
  process.env.PYTHONHASHSEED = '0';
  try {
    const [rawCount, servedCount] = await Promise.all([
      rawInstructions(dir, [python, ...suite.raw.slice(1)]),
      passingRun(dir, { timeout_s: 3600 }).then((record) =>
        instructionsIn(fs.readFileSync(record.log_path, 'utf8')),
      ),
    ]);
    return {
      suite: suite.name,
      'raw instructions': rawCount.toLocaleString('en'),
      'served instructions': servedCount.toLocaleString('en'),
      ratio: `${(servedCount / rawCount).toFixed(4)}×`,
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** valgrind's total for each process it ran, summed: "==pid== I   refs:      6,468,932,437". */
function instructionsIn(output) {
  const totals = [...output.matchAll(/^==\d+== I\s+refs:\s+([\d,]+)$/gm)];
  if (totals.length === 0) throw new Error('no instruction count in the output');
  return totals.reduce((sum, match) => sum + Number(match[1].replaceAll(',', '')), 0);
}

function rawInstructions(dir, argv) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      cwd: dir,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: rawEnvironment(),
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(instructionsIn(stderr)) : reject(new Error(`raw run exited ${code}`)),
    );
  });
}

function hasValgrind() {
  return spawnSync('valgrind', ['--version'], { stdio: 'ignore' }).status === 0;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const range = (values, format) =>
  `${format(median(values))} (${format(Math.min(...values))} to ${format(Math.max(...values))})`;

/** Medians of alternating rounds of wall time, each served run against its own raw run. */
async function wallRow(suite) {
  const dir = gitRepository(suite.files);
  try {
    rawRun(dir, suite.raw); // warm caches (imports, bytecode of the runner itself) for both sides
    await servedRun(dir);
    const raw = [];
    const served = [];
    const rounds = ROUNDS * (suite.roundsFactor ?? 1);
    for (let round = 0; round < rounds; round += 1) {
      // Which side goes first alternates too: the second run of a pair is not always the served one.
      if (round % 2 === 0) raw.push(rawRun(dir, suite.raw));
      served.push(await servedRun(dir));
      if (round % 2 === 1) raw.push(rawRun(dir, suite.raw));
    }
    const overhead = served.map((ms, round) => ms - raw[round]);
    return {
      suite: suite.name,
      rounds,
      'raw ms': Math.round(median(raw)),
      'served ms': Math.round(median(served)),
      ratio: range(
        served.map((ms, round) => ms / raw[round]),
        (ratio) => `${ratio.toFixed(2)}×`,
      ),
      'overhead ms': range(overhead, (ms) => `${ms < 0 ? '' : '+'}${Math.round(ms)}`),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const suites = SUITES.filter(
  (each) => each.name.includes(FILTER) && (!INSTRUCTIONS || each.instructions),
);
if (INSTRUCTIONS && !hasValgrind()) {
  console.log(
    'Runner overhead in instructions: skipped, valgrind is not installed (apt-get install valgrind).',
  );
  process.exit(0);
}
const rows = [];
for (const suite of suites)
  rows.push(await (INSTRUCTIONS ? instructionRow(suite) : wallRow(suite)));
console.log(
  INSTRUCTIONS
    ? 'Runner overhead in instructions the test processes executed (callgrind, one run a side):'
    : `Runner overhead, medians of alternating rounds (node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}):`,
);
console.table(rows);
