#!/usr/bin/env node
// Measures what one approval evaluation costs against one raw run of the suite (issue 9, requirement 10):
// candidate run + trusted run + fail-to-pass run, with the baseline already cached, divided by one raw run.
// A real pytest project in a temp git repo; each test sleeps a little so the suite, not start-up, dominates.
// Needs a build first: `npx tsc -p .`, then `node scripts/bench-evaluation.mjs`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runIndependentTests } from '../dist/actions/run-independent-tests.js';
import { initKey } from '../dist/records/keys.js';
import { openTask } from '../dist/actions/task-scope.js';
import { evaluateCandidate } from '../dist/evaluation/evaluate.js';

// As `coachgate serve` does at start: the runs are signed, and nothing creates the key on first use.
await initKey();

const TASK = 'TASK-BENCH';
const FILES = 4;
const TESTS_PER_FILE = 25;
const SLEEP_S = 0.01;

function project() {
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
  write('pyproject.toml', '[tool.pytest.ini_options]\ntestpaths = ["tests"]\npythonpath = ["."]\n');
  write('calc.py', 'def add(a, b):\n    return a + b\n');
  write(
    `.guardkit/tasks/backlog/${TASK}.md`,
    `---\nid: ${TASK}\ntitle: Bench\n---\n## Acceptance Criteria\n- [ ] AC-001: mul works\n`,
  );
  for (let file = 0; file < FILES; file += 1) {
    const tests = Array.from(
      { length: TESTS_PER_FILE },
      (_, i) =>
        `def test_add_${i}():\n    time.sleep(${SLEEP_S})\n    assert add(${i}, 1) == ${i + 1}\n`,
    );
    write(
      `tests/test_add_${file}.py`,
      `import time\nfrom calc import add\n\n\n${tests.join('\n\n')}`,
    );
  }
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('commit', '-q', '-m', 'base');
  git('checkout', '-q', '-b', `autobuild/${TASK}`);
  write('calc.py', 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n');
  write(
    'tests/test_mul.py',
    'from calc import mul\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n',
  );
  return dir;
}

async function timed(work) {
  const start = performance.now();
  const value = await work();
  return { value, ms: performance.now() - start };
}

const dir = project();
try {
  const scope = await openTask(dir, TASK);
  const raw = await timed(() => runIndependentTests(dir, { task_id: TASK }));
  const request = {
    worktree: dir,
    taskId: TASK,
    baseCommit: scope.base.commit,
    config: scope.config,
    candidateTests: raw.value.tests.map((test) => test.id),
  };
  const cold = await timed(() => evaluateCandidate(request));
  const warm = await timed(() => evaluateCandidate(request));
  const approval = raw.ms + warm.ms;
  console.log(`suite: ${raw.value.counts.total} pytest tests, ${raw.value.status}`);
  console.log(`one raw run:                         ${raw.ms.toFixed(0)} ms`);
  console.log(
    `evaluation, baseline not cached:     ${cold.ms.toFixed(0)} ms (regressions: ${cold.value.regressions.length})`,
  );
  console.log(
    `evaluation, baseline cached:         ${warm.ms.toFixed(0)} ms (baseline cached: ${warm.value.baseline?.cached})`,
  );
  console.log(
    `approval cost (candidate + trusted + fail-to-pass) / raw run: ${(approval / raw.ms).toFixed(2)}x (target <= 2.5x)`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
