#!/usr/bin/env node
// check_test_integrity's cost on a small pytest project (3 tests), as a ratio of the server's own run
// of the same tree (run_independent_tests), in this one process: once before any approval (it makes
// the trusted runs itself, beside its static reading) and, after an approval attempt made them, with
// the trusted runs of the tree in hand. Target: under 2 s in the second case.
// Needs a build first: `npx tsc -p .`, then `node scripts/bench-integrity.mjs`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROUNDS = Number(process.env.BENCH_INTEGRITY_ROUNDS ?? 5);
const state = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-state-'));
process.env.COACHGATE_STATE_DIR = state;
const { initKey } = await import('../dist/records/keys.js');
const { recordPlayerReport } = await import('../dist/actions/record-player-report.js');
const { runIndependentTests } = await import('../dist/actions/run-independent-tests.js');
const { checkTestIntegrity } = await import('../dist/actions/check-test-integrity.js');
const { recordVerdict } = await import('../dist/actions/record-verdict.js');
const { openTask } = await import('../dist/actions/task-scope.js');
await initKey();

const TASK = 'TASK-BENCH-INTEGRITY';
const BASE = {
  'pytest.ini': '[pytest]\npythonpath = .\n',
  'app/__init__.py': '',
  'app/text.py': 'def slug(text):\n    return text.lower().replace(" ", "-")\n',
  'tests/test_text.py':
    'from app.text import slug\n\n\ndef test_spaces():\n    assert slug("A B") == "a-b"\n\n\ndef test_plain():\n    assert slug("x") == "x"\n',
  [`.guardkit/tasks/backlog/${TASK}.md`]: `---\nid: ${TASK}\ntitle: Shout\n---\n## Acceptance Criteria\n- [ ] AC-001: shout(text) shouts\n`,
};
const PLAYER = {
  'app/text.py': `${BASE['app/text.py']}\n\ndef shout(text):\n    return text.upper() + "!"\n`,
  'tests/test_shout.py':
    'from app.text import shout\n\n\ndef test_shout():\n    assert shout("hi") == "HI!"\n',
};

/** A fresh project on its task branch with the Player's turn reported. */
async function project() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-bench-integrity-'));
  const env = { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@example.invalid' };
  env.GIT_COMMITTER_NAME = env.GIT_AUTHOR_NAME;
  env.GIT_COMMITTER_EMAIL = env.GIT_AUTHOR_EMAIL;
  const git = (...args) => execFileSync('git', args, { cwd: dir, env });
  const write = (files) => {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
      writeFileSync(path.join(dir, file), text);
    }
  };
  git('init', '-q', '-b', 'main');
  write(BASE);
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  git('checkout', '-q', '-b', `autobuild/${TASK}`);
  write(PLAYER);
  await recordPlayerReport(dir, TASK, 1, {
    files_modified: Object.keys(PLAYER),
    tests_passed: true,
    requirements_addressed: ['AC-001'],
  });
  return dir;
}

const timed = async (work) => {
  const started = performance.now();
  await work();
  return performance.now() - started;
};
const rows = { run: [], fresh: [], cached: [] };
for (let round = 0; round < ROUNDS; round += 1) {
  const dir = await project();
  try {
    rows.run.push(await timed(() => runIndependentTests(dir, { task_id: TASK })));
    rows.fresh.push(await timed(() => checkTestIntegrity(dir, TASK)));
    const evidence = [{ criterion: 'AC-001', test: 'test_shout' }];
    const scope = await openTask(dir, TASK);
    await recordVerdict(scope, { turn: 1, decision: 'approve', rationale: 'ok', evidence });
    rows.cached.push(await timed(() => checkTestIntegrity(dir, TASK)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
rmSync(state, { recursive: true, force: true });

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ratios = (values) => values.map((value, index) => value / rows.run[index]);
const range = (values) => `${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)}`;
console.log(`check_test_integrity on a 3-test pytest project (medians of ${ROUNDS} rounds)`);
console.log(`  run_independent_tests                        ${median(rows.run).toFixed(0)} ms`);
for (const [key, label] of [
  ['fresh', 'integrity, trusted runs made by the call    '],
  ['cached', 'integrity, trusted runs of the approval     '],
]) {
  const ratio = ratios(rows[key]);
  console.log(
    `  ${label} ${median(rows[key]).toFixed(0)} ms = ${median(ratio).toFixed(2)}× the run (${range(ratio)})`,
  );
}
console.log(
  `  target: the second under 2000 ms — ${median(rows.cached) < 2000 ? 'met' : 'NOT met'}`,
);
