import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { stopTreeRuns } from '../../src/evaluation/early-runs.js';
import { BLOCKED, CLI, dashboardRepository } from '../helpers/dashboard-repo.js';
import { callTool, connect, dataOf } from '../helpers/mcp.js';

const run = promisify(execFile);

/** The task the loop runs in its own worktree (the documented flow). */
export const IN_WORKTREE = 'TASK-WT-001';
export const IN_WORKTREE_PATH = `.guardkit/worktrees/${IN_WORKTREE}`;

const TASK_FILE = `---
id: ${IN_WORKTREE}
title: Farewell, in its own worktree
status: backlog
dependencies: [TASK-GREET-001]
---
## Acceptance Criteria
- [ ] AC-001: farewell(name) says goodbye by name
`;

const FAREWELL = 'export const farewell = (name) => `Goodbye, ${name}!`;\n';
const farewellTests = (expected: string) =>
  [
    "import assert from 'node:assert/strict';",
    "import { test } from 'node:test';",
    "import { farewell } from '../src/farewell.js';",
    `test('says goodbye by name', () => assert.equal(farewell('Ada'), ${JSON.stringify(expected)}));`,
  ].join('\n');

/**
 * The dashboard repository (tests/helpers/dashboard-repo.ts) untouched, plus TASK-WT-001 run as the
 * docs run a task: `coachgate worktree start` from the main checkout, then the loop's tool calls in
 * `.guardkit/worktrees/TASK-WT-001` — a failing turn with feedback, then a passing run the Coach has
 * yet to review. Every mirror matches the server's copy; the tests edit one themselves.
 */
export async function worktreeFlowRepository(): Promise<string> {
  const repository = await dashboardRepository();
  // The shared helper edits the blocked task's mirror; these tests start from an untouched one.
  editFirstVerdict(repository, BLOCKED, 'approve', 'feedback');
  await startInWorktree(repository);
  const { client, close } = await connect({ roots: [repository] });
  try {
    const worktree = path.join(repository, IN_WORKTREE_PATH);
    const call = (name: string, args: Record<string, unknown> = {}) =>
      callTool(client, name, { worktree, task_id: IN_WORKTREE, ...args });
    mkdirSync(path.join(worktree, 'src'), { recursive: true });
    mkdirSync(path.join(worktree, 'test'), { recursive: true });
    writeFileSync(path.join(worktree, 'src', 'farewell.js'), FAREWELL);
    for (const [turn, expected] of [
      [1, 'Bye, Ada!'],
      [2, 'Goodbye, Ada!'],
    ] as const) {
      writeFileSync(path.join(worktree, 'test', 'farewell.test.js'), farewellTests(expected));
      const files = ['src/farewell.js', 'test/farewell.test.js'];
      dataOf(
        await call('record_player_report', {
          turn,
          report: { files_created: files, tests_passed: true },
        }),
      );
      dataOf(await call('run_independent_tests'));
      if (turn === 1)
        dataOf(
          await call('record_verdict', {
            turn,
            decision: 'feedback',
            rationale: "The server's run fails: the test expects another farewell.",
          }),
        );
    }
  } finally {
    await close();
    // As a server stops: the trusted runs the passing run started in the background end now, not
    // while a test compares the state directory before and after the page reads it.
    await stopTreeRuns();
  }
  return repository;
}

/**
 * Commits the task file on main, as `coachgate task new` does there, and starts the task's worktree
 * from main. The demo leaves the main checkout on its own task branch, so the commit is made in a
 * scratch worktree of main, removed again.
 */
async function startInWorktree(repository: string): Promise<void> {
  const scratch = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-main-')), 'main');
  const git = (cwd: string, ...args: string[]) =>
    run('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', ...args], { cwd });
  await git(repository, 'worktree', 'add', '-q', scratch, 'main');
  const file = path.join('.guardkit', 'tasks', 'backlog', `${IN_WORKTREE}.md`);
  writeFileSync(path.join(scratch, file), TASK_FILE);
  await git(scratch, 'add', '--', file);
  await git(scratch, 'commit', '-q', '-m', `${IN_WORKTREE}: the task`);
  await git(repository, 'worktree', 'remove', scratch);
  await run(process.execPath, [
    CLI,
    ...['worktree', 'start', '--task', IN_WORKTREE, '--base', 'main', '--worktree', repository],
  ]);
}

/** Rewrites the decision of a task's first mirrored verdict; returns a function that undoes it. */
export function editFirstVerdict(
  worktree: string,
  taskId: string,
  from: string,
  to: string,
): () => void {
  const mirror = path.join(worktree, '.guardkit', 'autobuild', taskId, 'verdicts.jsonl');
  const text = readFileSync(mirror, 'utf8');
  const lines = text.split('\n');
  lines[0] = lines[0]!.replace(`"decision":"${from}"`, `"decision":"${to}"`);
  // Replaced whole (a rename), as an editor saves: the page polls, and must never read it half written.
  const replace = (content: string) => {
    writeFileSync(`${mirror}.edit`, content);
    renameSync(`${mirror}.edit`, mirror);
  };
  replace(lines.join('\n'));
  return () => replace(text);
}

/** A real edit of a mirror record: the first verdict, a feedback in the server's copy, approves. */
export function tamperWithMirror(worktree: string, taskId: string): () => void {
  return editFirstVerdict(worktree, taskId, 'feedback', 'approve');
}
