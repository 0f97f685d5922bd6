import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI } from './cli.js';
import { callTool, connect, dataOf } from './mcp.js';

export { CLI };
export const BLOCKED = 'TASK-BLOCK-001';
/** A failing test's name that would run script if the page rendered it as markup. */
export const HTML_TEST_NAME = '<img src=x onerror=document.title=1>';
export const HTML_TITLE = '<b>Markup</b> in the title';

const task = (id: string, title: string, dependsOn: string[]) => `---
id: ${id}
title: ${title}
status: backlog
dependencies: [${dependsOn.join(', ')}]
---
## Acceptance Criteria
- [ ] AC-001: ${title}
`;

/** What the blocked task's Player turns leave failing: the set shrinks, then grows again. */
const FAILING_BY_TURN = [
  [HTML_TEST_NAME, 'shouts'],
  [HTML_TEST_NAME],
  [HTML_TEST_NAME, 'whispers'],
];

/**
 * A repository with a real loop recorded: `coachgate demo --keep` (turn 1 refused then feedback, turn 2
 * approved), plus TASK-BLOCK-001, blocked after three feedback turns whose failing tests include one
 * named with HTML, two tasks that depend on each other (a cycle), and a tampered mirror.
 */
export async function dashboardRepository(): Promise<string> {
  const worktree = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-ui-')), 'greeting');
  const tasks = path.join(worktree, '.guardkit', 'tasks', 'backlog');
  mkdirSync(tasks, { recursive: true });
  writeFileSync(path.join(tasks, `${BLOCKED}.md`), task(BLOCKED, HTML_TITLE, ['TASK-GREET-001']));
  writeFileSync(
    path.join(tasks, 'TASK-CYCLE-A.md'),
    task('TASK-CYCLE-A', 'Cycle A', ['TASK-CYCLE-B']),
  );
  writeFileSync(
    path.join(tasks, 'TASK-CYCLE-B.md'),
    task('TASK-CYCLE-B', 'Cycle B', ['TASK-CYCLE-A']),
  );
  await promisify(execFile)(process.execPath, [CLI, 'demo', '--keep', worktree]);

  const { client, close } = await connect({ roots: [worktree] });
  try {
    const call = (name: string, args: Record<string, unknown> = {}) =>
      callTool(client, name, { worktree, task_id: BLOCKED, ...args });
    for (const [index, failing] of FAILING_BY_TURN.entries()) {
      const turn = index + 1;
      writeFileSync(
        path.join(worktree, 'test', 'markup.test.js'),
        [
          "import assert from 'node:assert/strict';",
          "import { test } from 'node:test';",
          ...failing.map(
            (name) => `test(${JSON.stringify(name)}, () => assert.fail('turn ${turn}'));`,
          ),
        ].join('\n'),
      );
      dataOf(
        await call('record_player_report', {
          turn,
          report: { files_created: ['test/markup.test.js'], tests_passed: true },
        }),
      );
      dataOf(await call('run_independent_tests'));
      dataOf(
        await call('record_verdict', {
          turn,
          decision: 'feedback',
          rationale: `Turn ${turn}: the server's run fails.`,
          issues: [
            {
              severity: 'must_fix',
              category: 'correctness',
              description: `${failing.length} failing`,
            },
          ],
        }),
      );
    }
  } finally {
    await close();
  }
  // Someone flips the mirror's first verdict to an approval; the server's copy is what counts.
  const mirror = path.join(worktree, '.guardkit', 'autobuild', BLOCKED, 'verdicts.jsonl');
  const lines = readFileSync(mirror, 'utf8').split('\n');
  lines[0] = lines[0]!.replace('"decision":"feedback"', '"decision":"approve"');
  writeFileSync(mirror, lines.join('\n'));
  return worktree;
}
