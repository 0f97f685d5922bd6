#!/usr/bin/env node
// Runner overhead: each suite run through coachgate's run_independent_tests action (detection, report
// flags, output capture, tree fingerprints before and after, parsing) against the same command run raw,
// in this same session. Raw and served runs alternate, so machine load hits both sides alike, and
// each round's served run is compared with its own raw run: the median of those rounds is printed,
// with their range (a best-of figure pairs a lucky raw run with an unlucky served one).
// Targets: ≤ 1.05× on the 1 s pytest suite, ≤ +60 ms on the trivial suites, ≤ 1.10× on 2,000 tests.
// Needs a build first: `npx tsc -p .`, then `node scripts/bench-runner.mjs [--rounds=N] [filter]`
// (default 7 rounds, three times as many for the trivial suite; `node scripts/bench-runner.mjs node`
// runs the suites whose name holds "node").
import { spawnSync } from 'node:child_process';
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

const SUITES = [
  {
    name: 'pytest, one test sleeping 1 s',
    files: {
      'pytest.ini': '[pytest]\n',
      'tests/test_slow.py': 'import time\n\ndef test_slow():\n    time.sleep(1)\n',
    },
    raw: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
  },
  {
    name: 'pytest, 2,000 tests',
    files: {
      'pytest.ini': '[pytest]\n',
      'tests/test_many.py':
        'import pytest\n\n@pytest.mark.parametrize("n", range(2000))\ndef test_many(n):\n    assert n >= 0\n',
    },
    raw: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
  },
  {
    name: 'node --test, one trivial test',
    files: {
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'test/trivial.test.js': "import test from 'node:test';\ntest('trivial', () => {});\n",
    },
    raw: ['node', '--test'],
    // A third of a second a run: three times the rounds cost little and steady the median.
    roundsFactor: 3,
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

function rawRun(dir, argv) {
  const start = performance.now();
  const program = argv[0] === 'python3' ? PYTHON : argv[0];
  const result = spawnSync(program, argv.slice(1), {
    cwd: dir,
    stdio: 'ignore',
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
  });
  if (result.status !== 0) throw new Error(`raw run of ${argv.join(' ')} exited ${result.status}`);
  return performance.now() - start;
}

async function servedRun(dir) {
  const start = performance.now();
  const record = await runIndependentTests(dir, {});
  if (record.status !== 'passed')
    throw new Error(`served run in ${dir} was ${record.status}: ${record.summary}`);
  return performance.now() - start;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const range = (values, format) =>
  `${format(median(values))} (${format(Math.min(...values))} to ${format(Math.max(...values))})`;

const rows = [];
for (const suite of SUITES.filter((each) => each.name.includes(FILTER))) {
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
    rows.push({
      suite: suite.name,
      rounds,
      'raw ms': Math.round(median(raw)),
      'served ms': Math.round(median(served)),
      ratio: range(
        served.map((ms, round) => ms / raw[round]),
        (ratio) => `${ratio.toFixed(2)}×`,
      ),
      'overhead ms': range(overhead, (ms) => `${ms < 0 ? '' : '+'}${Math.round(ms)}`),
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `Runner overhead, medians of alternating rounds (node ${process.version}, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}):`,
);
console.table(rows);
