#!/usr/bin/env node
// What an approval's evaluation costs against one raw run of the suite (issue 31: <= 1.5x).
// Per suite, in one temp git repo with three tasks per round (the baseline is cached by a first one):
//   raw run            the suite once, as run_independent_tests runs it, with nothing else started;
//   full Coach turn    run_independent_tests + record_verdict approve (candidate, trusted and
//                      fail-to-pass runs; the trusted runs start beside the candidate run);
//   record_verdict     the approval alone, called the moment run_independent_tests returns;
//   next turn          a full Coach turn after an approval of the same task was refused on a
//                      broken version of the code, with only the code fixed since (the
//                      fail-to-pass run is reused from the refused attempt).
// Suites: 100 pytest tests that sleep a little (the suite, not start-up, dominates), a generated
// suite of 1,500 pytest tests, 300 vitest tests (this repository's vitest, linked) and 200
// node:test tests, whose runs cannot be limited to the Player's files. The machine may be
// shared: each figure is measured REPS times (default 5, the rounds issue 31 asks for), each
// ratio against the raw run of its own repetition, and the median printed with the range,
// beside the load average.
// Needs a build first: `npx tsc -p .`, then
// `node scripts/bench-evaluation.mjs [--reps=N] [name filter]`
// (`node scripts/bench-evaluation.mjs vitest` runs the suites whose name contains "vitest").
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { recordPlayerReport } from '../dist/actions/record-player-report.js';
import { recordVerdict } from '../dist/actions/record-verdict.js';
import { runIndependentTests } from '../dist/actions/run-independent-tests.js';
import { openTask } from '../dist/actions/task-scope.js';
import { initKey } from '../dist/records/keys.js';

// As `coachgate serve` does at start: the runs are signed, and nothing creates the key on first use.
await initKey();

const options = process.argv.slice(2);
const REPS = Number(options.map((arg) => /^--reps=(\d+)$/.exec(arg)?.[1]).find(Boolean) ?? 5);
const FILTER = options.find((arg) => !arg.startsWith('--')) ?? '';
const WARM = 'TASK-BENCH-WARM';
const rounds = Array.from({ length: REPS }, (_, rep) => ({
  turn: `TASK-BENCH-TURN-${rep}`,
  verdict: `TASK-BENCH-VERDICT-${rep}`,
  next: `TASK-BENCH-NEXT-${rep}`,
}));
const TASKS = [WARM, ...rounds.flatMap((round) => [round.turn, round.verdict, round.next])];
const SUITES = [
  {
    name: '100 pytest tests, 10 ms each',
    kind: 'pytest',
    files: 4,
    perFile: 25,
    body: 'time.sleep(0.01)',
  },
  {
    name: '1,500 pytest tests (generated)',
    kind: 'pytest',
    files: 30,
    perFile: 50,
    body: 'sum(range(200))',
  },
  {
    name: '300 vitest tests, 10 ms each',
    kind: 'vitest',
    files: 10,
    perFile: 30,
    body: 'await new Promise((resolve) => setTimeout(resolve, 10));',
  },
  {
    name: '200 node:test tests, 10 ms each',
    kind: 'node',
    files: 10,
    perFile: 20,
    body: 'await new Promise((resolve) => setTimeout(resolve, 10));',
  },
].filter((suite) => suite.name.includes(FILTER));
const REPOSITORY = path.resolve(import.meta.dirname, '..');

/** The files of one suite's base, the Player's change on top of it, and the test cited for it. */
const LAYOUTS = {
  pytest: (suite) => ({
    base: {
      'pyproject.toml': '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n',
      'calc.py': 'def add(a, b):\n    return a + b\n',
      ...generated(suite.files, (file) => [
        `tests/test_add_${file}.py`,
        `import time\nfrom calc import add\n\n\n${Array.from(
          { length: suite.perFile },
          (_, i) =>
            `def test_add_${i}():\n    ${suite.body}\n    assert add(${i}, 1) == ${i + 1}\n`,
        ).join('\n\n')}`,
      ]),
    },
    player: {
      'calc.py': 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n',
      'tests/test_mul.py': 'from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
    },
    code: 'calc.py',
    test: 'test_mul',
  }),
  vitest: (suite) => ({
    base: {
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
      '.gitignore': 'node_modules/\n',
      'src/calc.js': 'export const add = (a, b) => a + b;\n',
      ...generated(suite.files, (file) => [
        `test/add_${file}.test.js`,
        `import { expect, test } from 'vitest';\nimport { add } from '../src/calc.js';\n\n${Array.from(
          { length: suite.perFile },
          (_, i) =>
            `test('add ${i}', async () => {\n  ${suite.body}\n  expect(add(${i}, 1)).toBe(${i + 1});\n});\n`,
        ).join('\n')}`,
      ]),
    },
    player: {
      'src/calc.js': 'export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n',
      'test/mul.test.js':
        "import { expect, test } from 'vitest';\nimport { mul } from '../src/calc.js';\n\ntest('mul', () => {\n  expect(mul(2, 3)).toBe(6);\n});\n",
    },
    code: 'src/calc.js',
    test: 'test/mul.test.js > mul',
  }),
  // node --test: no run can be limited to the Player's files, so each trusted run is the suite.
  node: (suite) => ({
    base: {
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'src/calc.js': 'export const add = (a, b) => a + b;\n',
      ...generated(suite.files, (file) => [
        `test/add_${file}.test.js`,
        `import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { add } from '../src/calc.js';\n\n${Array.from(
          { length: suite.perFile },
          (_, i) =>
            `test('add ${file} ${i}', async () => {\n  ${suite.body}\n  assert.equal(add(${i}, 1), ${i + 1});\n});\n`,
        ).join('\n')}`,
      ]),
    },
    player: {
      'src/calc.js': 'export const add = (a, b) => a + b;\nexport const mul = (a, b) => a * b;\n',
      'test/mul.test.js':
        "import test from 'node:test';\nimport assert from 'node:assert/strict';\nimport { mul } from '../src/calc.js';\n\ntest('mul', () => {\n  assert.equal(mul(2, 3), 6);\n});\n",
    },
    code: 'src/calc.js',
    test: 'mul',
  }),
};

function generated(count, file) {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => file(index)));
}

function project(layout) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-eval-'));
  const git = (...args) =>
    execFileSync('git', args, {
      cwd: dir,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'b',
        GIT_AUTHOR_EMAIL: 'b@x',
        GIT_COMMITTER_NAME: 'b',
        GIT_COMMITTER_EMAIL: 'b@x',
      },
    });
  const write = (file, content) => {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  };
  for (const [file, content] of Object.entries(layout.base)) write(file, content);
  if (layout.base['package.json'])
    symlinkSync(path.join(REPOSITORY, 'node_modules'), path.join(dir, 'node_modules'));
  for (const task of TASKS) {
    write(
      `.guardkit/tasks/backlog/${task}.md`,
      `---\nid: ${task}\ntitle: Bench\n---\n## Acceptance Criteria\n- [ ] AC-001: mul works\n`,
    );
  }
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  git('checkout', '-q', '-b', 'autobuild/bench');
  for (const [file, content] of Object.entries(layout.player)) write(file, content);
  return { dir, write };
}

async function timed(work) {
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
}

async function attemptApproval(dir, task, test) {
  return recordVerdict(await openTask(dir, task), {
    turn: 1,
    decision: 'approve',
    rationale: 'bench',
    evidence: [{ criterion: 'AC-001', test }],
  });
}

async function approve(dir, task, test) {
  const result = await attemptApproval(dir, task, test);
  if (result.status !== 'approved') throw new Error(`not approved: ${result.status}`);
  return result;
}

const ratio = (value) => `${value.toFixed(2)}x`;
/** The median, then the range: `2.10x (1.90x-2.60x)`. */
function spread(values, format) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return `${format(median)} (${format(sorted[0])}-${format(sorted.at(-1))})`;
}
console.log(
  `machine: ${os.availableParallelism()} cores, load average ${os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
);
for (const suite of SUITES) {
  const layout = LAYOUTS[suite.kind](suite);
  const { dir, write } = project(layout);
  const code = layout.player[layout.code];
  try {
    // The Player's turn 1 on each task, reported before the Coach's turn (the gates read it).
    for (const task of TASKS) {
      await recordPlayerReport(dir, task, 1, {
        files_modified: Object.keys(layout.player),
        tests_written: Object.keys(layout.player).filter((file) => /test/.test(file)),
        tests_passed: true,
        requirements_addressed: ['AC-001'],
      });
    }
    // The baseline (base tests on base code) is cached by the first approval of the base.
    await runIndependentTests(dir, { task_id: WARM });
    await approve(dir, WARM, layout.test);
    const figures = { raw: [], run: [], turn: [], verdict: [], next: [] };
    let raw;
    let turn;
    let next;
    for (const round of rounds) {
      // Raw: the same run without a task, so nothing else starts beside it.
      raw = await timed(() => runIndependentTests(dir, {}));
      let run;
      turn = await timed(async () => {
        run = await timed(() => runIndependentTests(dir, { task_id: round.turn }));
        return approve(dir, round.turn, layout.test);
      });
      await runIndependentTests(dir, { task_id: round.verdict });
      const verdict = await timed(() => approve(dir, round.verdict, layout.test));
      // A Coach's next turn: the Player fixed the code it had broken, and left the tests alone.
      write(layout.code, code.replace('a * b', 'a + b'));
      await runIndependentTests(dir, { task_id: round.next });
      const refused = await attemptApproval(dir, round.next, layout.test).catch((error) => error);
      if (!(refused instanceof Error)) throw new Error('the broken code was approved');
      write(layout.code, code);
      next = await timed(async () => {
        await runIndependentTests(dir, { task_id: round.next });
        return approve(dir, round.next, layout.test);
      });
      figures.next.push(next.ms / raw.ms);
      figures.raw.push(raw.ms);
      figures.run.push(run.ms / raw.ms);
      figures.turn.push(turn.ms / raw.ms);
      figures.verdict.push(verdict.ms / raw.ms);
    }
    const evaluation = turn.value.evaluation;
    console.log(
      `\n${suite.name}: ${raw.value.counts.total} tests, ${raw.value.status}, ${REPS} reps`,
    );
    console.log(
      `  raw run:                         ${spread(figures.raw, (ms) => `${ms.toFixed(0)} ms`)}`,
    );
    console.log(
      `  full Coach turn (run + approve): ${spread(figures.turn, ratio)} (target <= 1.5x)`,
    );
    console.log(`  of it, the run with its task:    ${spread(figures.run, ratio)}`);
    console.log(`  record_verdict approve alone:    ${spread(figures.verdict, ratio)}`);
    console.log(
      `  next turn, only the code fixed:  ${spread(figures.next, ratio)} (fail-to-pass reused: ${next.value.evaluation.fail_to_pass_cached})`,
    );
    console.log(
      `  (baseline cached: ${evaluation.baseline?.cached}; trusted run ${evaluation.trusted?.tests_total} tests; regressions ${evaluation.regressions.length})`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
console.log(
  `\nload average after: ${os
    .loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
);
