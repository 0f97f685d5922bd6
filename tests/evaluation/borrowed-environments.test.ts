import { execFileSync } from 'node:child_process';
import { mkdirSync, readlinkSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/**
 * Snapshot environments never point back into the worktree: a borrowed node_modules or virtualenv must
 * make the trusted and fail-to-pass runs import the snapshot's copy of the project, through the MCP
 * client with real runners.
 */
let repo: TempRepo | undefined;
let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  repo?.remove();
  repo = undefined;
  close = undefined;
});

const TASK = 'TASK-018';
const TASK_FILE = `---
id: ${TASK}
title: Shout
status: in_progress
---
## Acceptance Criteria
- [ ] AC-001: shout(text) returns the text in upper case with "!"
`;

async function session(files: string[]) {
  const connection = await connect({ roots: [repo!.dir] });
  close = connection.close;
  const call = (client: Client, name: string, args: Record<string, unknown>) =>
    callTool(client, name, { worktree: repo!.dir, task_id: TASK, ...args });
  await call(connection.client, 'record_player_report', {
    turn: 1,
    report: {
      files_modified: files,
      tests_written: files.filter((file) => file.includes('test/')),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
  return async (turn: number, test: string) => {
    dataOf(await call(connection.client, 'run_independent_tests', {}));
    const result = await call(connection.client, 'record_verdict', {
      turn,
      decision: 'approve',
      rationale: 'done',
      evidence: [{ criterion: 'AC-001', test }],
    });
    return { result, text: textOf(result) };
  };
}

describe('node_modules that links the package back into the tree', () => {
  const LIB = 'export function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
  const SHOP = { name: 'shop', version: '1.0.0', type: 'module', main: 'src/lib.js' };
  const byName = (body: string) =>
    [
      "import test from 'node:test';",
      "import assert from 'node:assert/strict';",
      "import * as shop from 'shop';", // by package name: through node_modules/shop
      '',
      body,
      '',
    ].join('\n');
  const json = (value: unknown) => JSON.stringify(value, null, 2);
  const task = {
    '.gitignore': 'node_modules/\n',
    [`.guardkit/tasks/backlog/${TASK}.md`]: TASK_FILE,
  };

  // No "exports" in either: Node's self-reference by name needs it, so `shop` resolves only through
  // node_modules, as in a project that imports itself by name.
  const layouts = {
    'an npm-workspaces monorepo (node_modules/shop -> ../packages/shop, made by npm install)': {
      package: 'packages/shop',
      files: {
        'package.json': json({
          name: 'mono',
          private: true,
          type: 'module',
          workspaces: ['packages/*'],
          scripts: { test: 'node --test' },
        }),
        'packages/shop/package.json': json(SHOP),
      },
      install(dir: string) {
        execFileSync(
          'npm',
          ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'],
          {
            cwd: dir,
            stdio: 'ignore',
          },
        );
        expect(readlinkSync(path.join(dir, 'node_modules/shop'))).toBe('../packages/shop');
      },
    },
    'a package linked to itself (node_modules/shop -> ..)': {
      package: '.',
      files: { 'package.json': json({ ...SHOP, scripts: { test: 'node --test' } }) },
      install(dir: string) {
        mkdirSync(path.join(dir, 'node_modules'));
        symlinkSync('..', path.join(dir, 'node_modules/shop'));
      },
    },
  };

  it.each(Object.entries(layouts))(
    '%s: the honest fix is approved with the base copy answering the fail-to-pass run, and a test that passes on the base is still caught',
    async (_layout, layout) => {
      const at = (file: string) => path.posix.join(layout.package, file);
      repo = makeRepo({
        ...task,
        ...layout.files,
        [at('src/lib.js')]: LIB,
        [at('test/lib.test.js')]: byName(
          "test('greets by name', () => assert.equal(shop.greet('Ada'), 'Hello, Ada!'));",
        ),
      });
      layout.install(repo.dir);
      repo.commit('installed'); // npm's lockfile, when it wrote one
      repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
      repo.write(
        at('src/lib.js'),
        `${LIB}\nexport function shout(text) {\n  return \`\${text.toUpperCase()}!\`;\n}\n`,
      );
      repo.write(
        at('test/shout.test.js'),
        byName(
          [
            "test('shouts', () => assert.equal(shop.shout('hi'), 'HI!'));",
            "test('still greets', () => assert.equal(shop.greet('Bo'), 'Hello, Bo!'));",
          ].join('\n'),
        ),
      );
      const approve = await session([at('src/lib.js'), at('test/shout.test.js')]);

      // A test that passes on the base code does not exercise the change: still caught.
      const refused = await approve(1, 'still greets');
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(/still greets.*also passes on the base code/);

      const approved = await approve(1, 'shouts');
      expect(approved.result.isError, approved.text).toBeFalsy();
      const evaluation = dataOf(approved.result).evaluation;
      expect(evaluation.taken_from_player).toEqual([at('src/lib.js')]);
      // The base copy answered: it has no shout(), so the new test failed on the base code.
      expect(evaluation.passing_on_base_code).toContain('still greets');
      expect(evaluation.passing_on_base_code).not.toContain('shouts');
    },
    240_000,
  );
});
