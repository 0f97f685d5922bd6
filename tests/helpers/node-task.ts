import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { makeRepo, type TempRepo } from './git-repo.js';
import { callTool, connect, dataOf, textOf } from './mcp.js';

/**
 * A node --test task project for the trusted-evaluation tests, the counterpart of python-task.ts:
 * `greet` exists at the base with one test, the task asks for `shout`, and the Player's files are
 * written on the task branch on top of the base.
 */
export const NODE_TASK = 'TASK-008';
/** The task file of a task that asks for `shout`, under any id. */
export const shoutTaskFile = (id: string) => `---
id: ${id}
title: Shout
status: in_progress
---
## Acceptance Criteria
- [ ] AC-001: shout(text) returns the text in upper case with "!"
`;
const TASK_FILE = shoutTaskFile(NODE_TASK);
export const BASE_LIB = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
export const GOOD_LIB = `${BASE_LIB}\nexport function shout(text) {\n  return \`\${text.toUpperCase()}!\`;\n}\n`;
export const BROKEN_LIB = GOOD_LIB.replace('Hello, ', 'Hi ');
export const BASE_TEST = [
  "import { describe, test } from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { greet } from '../src/lib.js';",
  '',
  "test('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));",
  "test('greets nobody', () => assert.equal(greet(''), 'Hello, !'));",
  '',
].join('\n');
const SHOUT_TEST = [
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { shout } from '../src/lib.js';",
  '',
  "test('shouts', () => assert.equal(shout('hi'), 'HI!'));",
  '',
].join('\n');

export interface NodeTask {
  repo: TempRepo;
  client: Client;
  close(): Promise<void>;
  call(name: string, args: Record<string, unknown>): ReturnType<typeof callTool>;
  /** run_independent_tests, then record_verdict approve with the shout evidence. */
  approve(): Promise<{ result: Awaited<ReturnType<typeof callTool>>; text: string }>;
}

/** A node --test project at its base commit, on the task branch, with the Player's turn 1 reported. */
export async function nodeTask(
  player: Record<string, string>,
  base: Record<string, string> = {},
): Promise<NodeTask> {
  const repo = makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }, null, 2),
    'src/lib.js': BASE_LIB,
    'test/lib.test.js': BASE_TEST,
    [`.guardkit/tasks/backlog/${NODE_TASK}.md`]: TASK_FILE,
    ...base,
  });
  repo.git('checkout', '-q', '-b', `autobuild/${NODE_TASK}`);
  const files = { 'src/lib.js': GOOD_LIB, 'test/shout.test.js': SHOUT_TEST, ...player };
  for (const [file, content] of Object.entries(files)) repo.write(file, content);
  const { client, close } = await connect({ roots: [repo.dir] });
  const call = (name: string, args: Record<string, unknown>) =>
    callTool(client, name, { worktree: repo.dir, task_id: NODE_TASK, ...args });
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: Object.keys(files),
      tests_written: Object.keys(files).filter((file) => file.startsWith('test/')),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
  const approve = async () => {
    dataOf(await call('run_independent_tests', {}));
    const result = await call('record_verdict', {
      turn: 1,
      decision: 'approve',
      rationale: 'done',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
    });
    return { result, text: textOf(result) };
  };
  return { repo, client, close, call, approve };
}
