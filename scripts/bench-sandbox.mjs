#!/usr/bin/env node
// Sandbox overhead: the same command through coachgate's runSandboxed, confined (bubblewrap / sandbox-exec)
// and not (policy off), in pairs in this one process, the side that goes first alternating, so that
// machine load hits both sides alike. Each pair's difference (or ratio) is one figure; their median
// and range are printed. On this VM the medians of each side alone, 9 runs each, put the trivial
// pytest's overhead at +253, +71, +85 and +1 ms in four runs within the hour; the medians of 15
// pairs' differences read -11 and +20 ms in a quiet hour, +35 to +172 ms in noisier ones, with
// ranges of about a second that say so.
// Targets: ≤ +50 ms median on a trivial pytest and a trivial `node --test` suite, ≤ 1.03× on a ~1 s suite.
// Needs a build first: `npx tsc -p .`, then `node scripts/bench-sandbox.mjs`.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { detectSandbox } from '../dist/sandbox/backend.js';
import { runSandboxed } from '../dist/sandbox/run.js';
import { OutputCapture } from '../dist/runner/output-capture.js';

const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 15);

const SUITES = [
  {
    name: 'pytest, one trivial test',
    files: { 'pytest.ini': '[pytest]\n', 'tests/test_x.py': 'def test_x():\n    assert True\n' },
    argv: ['python3', '-m', 'pytest', '-q', '-p', 'no:cacheprovider'],
  },
  {
    name: 'node --test, one trivial test',
    files: {
      'test/trivial.test.js': "import test from 'node:test';\ntest('trivial', () => {});\n",
    },
    argv: ['node', '--test'],
  },
  {
    name: 'node --test, one test sleeping 1 s',
    files: {
      'test/slow.test.js':
        "import test from 'node:test';\ntest('slow', () => new Promise((r) => setTimeout(r, 1000)));\n",
    },
    argv: ['node', '--test'],
    ratio: true,
  },
];

const backend = await detectSandbox();
if (backend.name === 'none') {
  console.log(`sandbox bench skipped: ${backend.reason}`);
  process.exit(0);
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};

async function once(dir, argv, mode) {
  const log = path.join(dir, '..', `${path.basename(dir)}-${mode}.log`);
  const capture = await OutputCapture.open(log);
  const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
  const started = performance.now();
  const outcome = await runSandboxed(
    { argv, cwd: dir, env, timeoutMs: 60_000, isolation: { policy: { mode, network: 'none' } } },
    capture,
  );
  const elapsed = performance.now() - started;
  await capture.close();
  if (outcome.exit_code !== 0)
    throw new Error(`${argv.join(' ')} (${mode}) exited ${outcome.exit_code}: see ${log}`);
  return elapsed;
}

console.log(
  `sandbox overhead (${backend.name}), medians of ${RUNS} pairs, each pair's difference:`,
);
const rows = [];
for (const suite of SUITES) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-sandbox-'));
  for (const [file, text] of Object.entries(suite.files)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
  }
  const plain = [];
  const sandboxed = [];
  await once(dir, suite.argv, 'off'); // warm the file cache for both sides
  for (let index = 0; index < RUNS; index++) {
    const order = index % 2 ? ['off', 'required'] : ['required', 'off'];
    const elapsed = {};
    for (const mode of order) elapsed[mode] = await once(dir, suite.argv, mode);
    plain.push(elapsed.off);
    sandboxed.push(elapsed.required);
  }
  const [a, b] = [median(plain), median(sandboxed)];
  const extras = plain.map((time, index) => sandboxed[index] - time);
  const ratios = plain.map((time, index) => sandboxed[index] / time);
  const [extra, ratio] = [median(extras), median(ratios)];
  const signed = (ms) => `${ms < 0 ? '' : '+'}${ms.toFixed(0)}`;
  const times = (value) => `${value.toFixed(3)}×`;
  const span = (values, format) =>
    `${format(Math.min(...values))} to ${format(Math.max(...values))}`;
  const target = suite.ratio
    ? `ratio ${times(ratio)} (${span(ratios, times)}; target ≤ 1.03×)`
    : `${signed(extra)} ms (${span(extras, signed)}; target ≤ +50 ms)`;
  rows.push({
    suite: suite.name,
    plain_ms: Math.round(a),
    sandboxed_ms: Math.round(b),
    extra_ms: Math.round(extra),
    ratio: Number(ratio.toFixed(3)),
  });
  console.log(
    `  ${suite.name.padEnd(36)} ${a.toFixed(0).padStart(5)} ms → ${b.toFixed(0).padStart(5)} ms  ${target}`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
}
if (process.env.BENCH_JSON) console.log(JSON.stringify(rows));
