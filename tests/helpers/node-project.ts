import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { makeRepo, type TempRepo } from './git-repo.js';
import { callTool, dataOf } from './mcp.js';

export const GREET_TASK = `---
id: TASK-042
title: Greeting
status: in_progress
---
## Acceptance Criteria
- [ ] AC-001: greet(name) returns "Hello, <name>!"
- [ ] AC-002: greet rejects an empty name with a TypeError
`;

export const GOOD_GREET =
  "export function greet(name) {\n  if (!name) throw new TypeError('name is required');\n  return `Hello, ${name}!`;\n}\n";
export const BAD_GREET =
  "export function greet(name) {\n  if (!name) throw new TypeError('name is required');\n  return `Hi ${name}`;\n}\n";
export const GREET_TESTS = [
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { greet } from '../src/greet.js';",
  '',
  "test('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));",
  "test('rejects empty names', () => assert.throws(() => greet(''), TypeError));",
  '',
].join('\n');

/**
 * A node project whose base commit has the task and no code, on branch autobuild/TASK-042 with the
 * Player's work (good or buggy) uncommitted in the worktree.
 */
export function greetingProject(greet = GOOD_GREET, config = ''): TempRepo {
  const repo = makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }, null, 2),
    '.guardkit/tasks/backlog/TASK-042.md': GREET_TASK,
    ...(config ? { '.guardkit/config.yaml': config } : {}),
  });
  repo.git('checkout', '-q', '-b', 'autobuild/TASK-042');
  repo.write('src/greet.js', greet);
  repo.write('test/greet.test.js', GREET_TESTS);
  return repo;
}

/** Each greeting criterion cited with the test that proves it. */
export const GREET_EVIDENCE = [
  { criterion: 'AC-001', test: 'greets by name' },
  { criterion: 'AC-002', test: 'rejects empty names' },
];

/**
 * One honest turn on a task (TASK-042 by default) through MCP: the Player's report, the server's own
 * run, the Coach's approval with GREET_EVIDENCE. Returns the task status record_verdict reports.
 */
export async function approveGreeting(
  client: Client,
  worktree: string,
  taskId = 'TASK-042',
  filesCreated = ['src/greet.js'],
): Promise<string> {
  const task = { worktree, task_id: taskId };
  await callTool(client, 'record_player_report', {
    ...task,
    turn: 1,
    report: { tests_passed: true, files_created: filesCreated },
  });
  await callTool(client, 'run_independent_tests', task);
  const verdict = await callTool(client, 'record_verdict', {
    ...task,
    turn: 1,
    decision: 'approve',
    rationale: 'verified',
    evidence: GREET_EVIDENCE,
  });
  return dataOf<{ status: string }>(verdict).status;
}
