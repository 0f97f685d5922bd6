import { readFileSync, symlinkSync, mkdirSync, writeFileSync, chmodSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { shoutTaskFile } from '../helpers/node-task.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/** node --test projects: hostile tactics refused by the trusted runs, honest refactors approved. */
const TASK = 'TASK-008';
let repo: TempRepo;
let client: Client;
let close: () => Promise<void>;
afterEach(async () => {
  await close?.();
  repo?.remove();
});

const TASK_FILE = shoutTaskFile(TASK);
const BASE_LIB = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
const SHOUT = '\nexport function shout(text) {\n  return `${text.toUpperCase()}!`;\n}\n';
const BASE_TEST = [
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { greet } from '../src/lib.js';",
  '',
  "test('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));",
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

async function nodeProject(player: Record<string, string>) {
  repo = makeRepo({
    'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }, null, 2),
    'src/lib.js': BASE_LIB,
    'test/lib.test.js': BASE_TEST,
    [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
  });
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  for (const [file, content] of Object.entries({ 'test/shout.test.js': SHOUT_TEST, ...player }))
    repo.write(file, content);
  ({ client, close } = await connect({ roots: [repo.dir] }));
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: Object.keys(player),
      tests_written: ['test/shout.test.js'],
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
}

const call = (name: string, args: Record<string, unknown>) =>
  callTool(client, name, { worktree: repo.dir, task_id: TASK, ...args });

async function approve() {
  const run = dataOf(await call('run_independent_tests', {}));
  const result = await call('record_verdict', {
    turn: 1,
    decision: 'approve',
    rationale: 'done',
    evidence: [{ criterion: 'AC-001', test: 'shouts' }],
  });
  return { run, result, text: textOf(result) };
}

const BROKEN_LIB = BASE_LIB.replace('Hello, ', 'Hi ') + SHOUT;

describe('trusted evaluation with node --test', () => {
  it('refuses process.exit(0) at the top of a base test file', async () => {
    await nodeProject({
      'src/lib.js': BROKEN_LIB,
      'test/lib.test.js': `process.exit(0);\n${BASE_TEST}`,
    });
    const { run, text } = await approve();
    expect(run.status).toBe('passed'); // the exiting file reported nothing, the rest passed
    expect(text).toMatch(
      /base test greets by name passed at the base but failed in the trusted run/,
    );
  });

  it('refuses a base test rewritten to assert true', async () => {
    await nodeProject({
      'src/lib.js': BROKEN_LIB,
      'test/lib.test.js': BASE_TEST.replace(
        "assert.equal(greet('Ada'), 'Hello, Ada!')",
        'assert.ok(true)',
      ),
    });
    expect((await approve()).text).toMatch(
      /base test greets by name passed at the base but failed in the trusted run/,
    );
  });

  it('refuses a pretest script that rewrites an assertion and a posttest that restores it', async () => {
    const swap = (from: string, to: string) =>
      `const fs = require('fs'); const f = 'test/lib.test.js'; fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(${JSON.stringify(from)}, ${JSON.stringify(to)}));\n`;
    await nodeProject({
      'src/lib.js': BROKEN_LIB,
      'rewrite.cjs': swap('Hello, Ada!', 'Hi Ada!'),
      'restore.cjs': swap('Hi Ada!', 'Hello, Ada!'),
      'package.json': JSON.stringify(
        {
          type: 'module',
          scripts: {
            pretest: 'node rewrite.cjs',
            test: 'node --test 2>&1',
            posttest: 'node restore.cjs',
          },
        },
        null,
        2,
      ),
    });
    const { run, text } = await approve();
    expect(run.status).toBe('passed'); // npm ran pretest, the tests, then posttest: the tree looks untouched
    expect(text).toMatch(
      /base test greets by name passed at the base but failed in the trusted run/,
    );
  });

  it('sends increasing progress notifications while the trusted runs last', async () => {
    await nodeProject({
      'src/lib.js': BASE_LIB + SHOUT,
      // Slow on the base code only (no shout there yet): the fail-to-pass run outlasts the candidate
      // run and the other trusted runs, which start beside it, so record_verdict waits for seconds.
      'test/slow.test.js': [
        "import test from 'node:test';",
        "import * as lib from '../src/lib.js';",
        "test('waits', () => new Promise((r) => setTimeout(r, lib.shout ? 0 : 8000)));",
        '',
      ].join('\n'),
    });
    dataOf(await call('run_independent_tests', {}));
    const progress: number[] = [];
    const result = await client.callTool(
      {
        name: 'record_verdict',
        arguments: {
          worktree: repo.dir,
          task_id: TASK,
          turn: 1,
          decision: 'approve',
          rationale: 'done',
          evidence: [{ criterion: 'AC-001', test: 'shouts' }],
        },
      },
      undefined,
      { timeout: 120_000, onprogress: (update) => progress.push(update.progress) },
    );
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('refuses a planted node_modules/.bin shim', async () => {
    await nodeProject({ 'src/lib.js': BASE_LIB + SHOUT, '.gitignore': 'node_modules/\n' });
    mkdirSync(path.join(repo.dir, 'node_modules/.bin'), { recursive: true });
    writeFileSync(path.join(repo.dir, 'node_modules/.bin/node'), '#!/bin/sh\necho "# pass 3"\n');
    chmodSync(path.join(repo.dir, 'node_modules/.bin/node'), 0o755);
    expect((await approve()).text).toMatch(
      /planted environment: node_modules\/\.bin\/node — not a link npm installed/,
    );
  });

  it('approves base tests wrapped in describe() with a changed title', async () => {
    const wrapped = BASE_TEST.replace(
      "import test from 'node:test';",
      "import { describe, test } from 'node:test';",
    ).replace(
      "test('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));",
      "describe('greet', () => {\n  test('says hello to a name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));\n});",
    );
    await nodeProject({ 'src/lib.js': BASE_LIB + SHOUT, 'test/lib.test.js': wrapped });
    const { result, text } = await approve();
    expect(result.isError, text).toBeFalsy();
    const data = dataOf(result);
    expect(data.evaluation).toMatchObject({
      regressions: [],
      baseline: { tests_total: 1 },
      trusted: { status: 'passed' },
    });
    expect(readFileSync(path.join(repo.dir, data.review_path), 'utf8')).toMatch(
      /^Verdict: APPROVED$/m,
    );
  });

  it('approves a linked node_modules/.bin entry as npm installs it', async () => {
    await nodeProject({ 'src/lib.js': BASE_LIB + SHOUT, '.gitignore': 'node_modules/\n' });
    mkdirSync(path.join(repo.dir, 'node_modules/tool/bin'), { recursive: true });
    mkdirSync(path.join(repo.dir, 'node_modules/.bin'), { recursive: true });
    writeFileSync(path.join(repo.dir, 'node_modules/tool/bin/tool.js'), '');
    symlinkSync('../tool/bin/tool.js', path.join(repo.dir, 'node_modules/.bin/tool'));
    const { result, text } = await approve();
    expect(result.isError, text).toBeFalsy();
  });
});
