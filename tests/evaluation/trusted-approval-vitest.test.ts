import { symlinkSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/** vitest projects (borrowing this repository's node_modules): weakened base tests refused. */
const TASK = 'TASK-009';
let repo: TempRepo;
let client: Client;
let close: () => Promise<void>;
afterEach(async () => {
  await close?.();
  repo?.remove();
});

const BASE_LIB = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
const BROKEN_LIB = 'export function greet(name) {\n  return `Hi ${name}!`;\n}\n';
const BASE_TEST =
  "import { expect, test } from 'vitest';\nimport { greet } from '../src/lib.js';\n\ntest('greets by name', () => {\n  expect(greet('Ada')).toBe('Hello, Ada!');\n});\n";

async function vitestProject(player: Record<string, string>) {
  repo = makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }, null, 2),
    '.gitignore': 'node_modules/\n',
    'src/lib.js': BASE_LIB,
    'test/lib.test.js': BASE_TEST,
    [`.guardkit/tasks/backlog/${TASK}.md`]: `---\nid: ${TASK}\ntitle: T\n---\n## Acceptance Criteria\n- [ ] AC-001: greet keeps working\n`,
  });
  symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules'));
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  for (const [file, content] of Object.entries(player)) repo.write(file, content);
  ({ client, close } = await connect({ roots: [repo.dir] }));
  await callTool(client, 'record_player_report', {
    worktree: repo.dir,
    task_id: TASK,
    turn: 1,
    report: {
      files_modified: Object.keys(player),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
}

async function approve() {
  const run = dataOf(
    await callTool(client, 'run_independent_tests', { worktree: repo.dir, task_id: TASK }),
  );
  const result = await callTool(client, 'record_verdict', {
    worktree: repo.dir,
    task_id: TASK,
    turn: 1,
    decision: 'approve',
    rationale: 'done',
    evidence: [{ criterion: 'AC-001', file: 'src/lib.js', snippet: 'return' }],
  });
  return { run, text: textOf(result), isError: result.isError };
}

const REFUSED =
  /base test test\/lib\.test\.js > greets by name passed at the base but (failed|did not run) in the trusted run/;

describe('trusted evaluation with vitest', () => {
  it.each([
    [
      'expect(true).toBe(true)',
      BASE_TEST.replace("expect(greet('Ada')).toBe('Hello, Ada!');", 'expect(true).toBe(true);'),
      true,
    ],
    // vitest 4 fails a file whose only test has no cases, so this one does not even fool the candidate run.
    [
      "test.each([])('same title')",
      BASE_TEST.replace(
        "test('greets by name', () => {",
        "test.each([])('greets by name', () => {",
      ),
      false,
    ],
    // coachgate no longer sets NO_COLOR, so this one fails the candidate run too; refused either way.
    [
      'if (process.env.NO_COLOR) return;',
      BASE_TEST.replace(
        "test('greets by name', () => {",
        "test('greets by name', () => {\n  if (process.env.NO_COLOR) return;",
      ),
      false,
    ],
  ])('refuses a base test weakened with %s', async (_tactic, body, foolsCandidateRun) => {
    await vitestProject({ 'src/lib.js': BROKEN_LIB, 'test/lib.test.js': body });
    const { run, text, isError } = await approve();
    if (foolsCandidateRun) expect(run.status).toBe('passed');
    expect(isError).toBe(true);
    expect(text).toMatch(REFUSED);
  });
});
