import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TempRepo } from '../helpers/git-repo.js';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';

/**
 * Ending the test process is an observed event under node's runners too. Each tactic ends the
 * process at the moment a base test would catch slug() broken (line 5 of src/text.js), by another
 * route: `process.exit` through a destructured alias under node --test, a SIGTERM to its own pid
 * under mocha, `process.reallyExit` through `Reflect.apply` under a plain `node` script whose exit
 * status is its verdict. Through the MCP client each is refused, the Player's run naming the file
 * and line; a CLI module that exits with the status its `main` returns when run as a program
 * (tested in process and as a program) is approved under node --test and under the plain script.
 */
const openTask = layoutTasks();

const linkModules = (repo: TempRepo) =>
  symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules'));

/** slug() broken for capitals, and the process ended on line 5 where a test would see it. */
const ending = (prelude: string, call: string) =>
  linesOf(
    prelude,
    '',
    'exports.slug = function (text) {',
    '  if (text !== text.toLowerCase()) {',
    `    ${call};`,
    '  }',
    "  return text.replace(' ', '-');",
    '};',
    'exports.shout = (text) => `${text.toUpperCase()}!`;',
  );
const SLUG = "exports.slug = (text) => text.toLowerCase().replace(' ', '-');\n";
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const CHECK = linesOf(
  "const assert = require('node:assert');",
  "const { slug } = require('../src/text.js');",
  "assert.equal(slug('A B'), 'a-b');",
  "console.log('ok');",
);
const SHOUT_CHECK = linesOf(
  "const { shout } = require('../src/text.js');",
  "require('node:assert').equal(shout('hi'), 'HI!');",
);

const RUNNERS = {
  'node --test': {
    base: {
      'package.json': JSON.stringify({ scripts: { test: 'node --test' } }),
      'src/text.js': SLUG,
      'test/text.test.js': `const test = require('node:test');\n${CHECK.replace(
        "assert.equal(slug('A B'), 'a-b');",
        "test('slug', () => assert.equal(slug('A B'), 'a-b'));",
      )}`,
    },
    shoutTest: {
      'test/shout.test.js': `require('node:test')('shouts', () => {\n${SHOUT_CHECK}});\n`,
    },
    evidence: 'shouts',
  },
  mocha: {
    base: {
      'package.json': JSON.stringify({ scripts: { test: 'mocha' } }),
      '.gitignore': 'node_modules/\n',
      'src/text.js': SLUG,
      'test/text.spec.js': CHECK.replace(
        "assert.equal(slug('A B'), 'a-b');",
        "it('slug', () => assert.equal(slug('A B'), 'a-b'));",
      ),
    },
    shoutTest: { 'test/shout.spec.js': `it('shouts', () => {\n${SHOUT_CHECK}});\n` },
    evidence: 'shouts',
  },
  'a plain node script': {
    base: {
      'package.json': JSON.stringify({ scripts: { test: 'node test/check.js' } }),
      'src/text.js': SLUG,
      'test/check.js': CHECK,
    },
    shoutTest: { 'test/check.js': CHECK + SHOUT_CHECK },
    evidence: 'node test/check.js',
  },
};

describe('ending the test process under node --test, mocha and a plain node script', () => {
  it.each([
    {
      runner: 'node --test' as const,
      route: 'process.exit through an alias',
      code: ending('const { exit } = process;', 'exit(0)'),
    },
    {
      runner: 'mocha' as const,
      route: 'a SIGTERM to its own pid',
      code: ending('const { pid } = process;', "process.kill(pid, 'SIGTERM')"),
    },
    {
      runner: 'a plain node script' as const,
      route: 'process.reallyExit through Reflect.apply',
      code: ending("const end = 'really' + 'Exit';", 'Reflect.apply(process[end], process, [0])'),
    },
  ])(
    'refuses an early end under $runner through $route, naming the file and line',
    async ({ runner, code }) => {
      const layout = RUNNERS[runner];
      const task = await openTask({
        base: layout.base,
        player: { 'src/text.js': code, ...layout.shoutTest },
        criterion: CRITERION,
        evidence: [{ criterion: 'AC-001', test: layout.evidence }],
        beforePin: linkModules,
      });
      const refused = await task.approve();
      expect(refused.result.isError).toBe(true);
      expect(refused.run.tests).toContainEqual(
        expect.objectContaining({
          id:
            runner === 'a plain node script'
              ? 'node test/check.js'
              : `coachgate: process ended at src/text.js:5`,
          message: expect.stringMatching(/ at src\/text\.js:5 ended the test process while /),
        }),
      );
    },
    240_000,
  );

  // The module the tests import is the program they start: it exits with main's status when run.
  const CLI = {
    'src/cli.js': linesOf(
      'exports.main = (argv) => (argv.length > 0 ? 3 : 0);',
      'if (require.main === module) process.exit(exports.main(process.argv.slice(2)));',
    ),
  };
  const CLI_CHECKS = linesOf(
    "const { spawnSync } = require('node:child_process');",
    "const { main } = require('../src/cli.js');",
    "const run = (...args) => spawnSync(process.execPath, ['src/cli.js', ...args]).status;",
    "const checked = () => main(['x']) === 3 && run('x') === 3 && run() === 0;",
  );
  it('approves a CLI whose program exits with the status main returns (node --test)', async () => {
    const task = await openTask({
      base: RUNNERS['node --test'].base,
      player: {
        ...CLI,
        'test/cli.test.js': `${CLI_CHECKS}require('node:test')('main', () => require('node:assert').ok(checked()));\n`,
      },
      criterion: 'the CLI exits with status 3 when given arguments',
      evidence: [{ criterion: 'AC-001', test: 'main' }],
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);

  it('approves the same CLI checked by a plain script that ends itself', async () => {
    const task = await openTask({
      base: RUNNERS['a plain node script'].base,
      player: {
        ...CLI,
        'test/check.js': `${CHECK}${CLI_CHECKS}process.exit(checked() ? 0 : 1);\n`,
      },
      criterion: 'the CLI exits with status 3 when given arguments',
      evidence: [{ criterion: 'AC-001', test: 'node test/check.js' }],
    });
    const approved = await task.approve();
    expect(approved.run.tests).toEqual([{ id: 'node test/check.js', status: 'passed' }]);
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);
});
