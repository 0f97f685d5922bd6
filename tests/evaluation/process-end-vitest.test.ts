import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { borrowNodeModules, VITEST_PROJECT } from '../helpers/vitest-project.js';

/**
 * Ending the test process under vitest (the pinned one this repository tests with). vitest turns
 * `process.exit` into a failing test itself; the routes it does not see end the fork, and its JUnit
 * report lists the test they cut short as passed. Each route below ends the fork where a base test
 * would catch slug() broken, one test file each; each is named at its file and line, with the
 * test that ran (process.exit: the test fails with vitest's own words). A CLI whose main returns a status, run by a test as a child process, is approved.
 */
const openTask = layoutTasks();

const ROUTES = {
  reallyExit: 'process.reallyExit(0);',
  kill: "process.kill(process.pid, 'SIGKILL');",
  abort: 'process.abort();',
  // vitest's own: its process.exit fails the test that called it.
  exit: 'process.exit(0);',
};
const NAMES = Object.keys(ROUTES) as (keyof typeof ROUTES)[];
const slugs = (body: (name: keyof typeof ROUTES) => string[]) =>
  NAMES.map((name) =>
    linesOf(`export function ${name}(text) {`, ...body(name).map((line) => `  ${line}`), '}', ''),
  ).join('');
const SHOUT = linesOf('export function shout(text) {', '  return `${text.toUpperCase()}!`;', '}');
const SHOUT_TEST = linesOf(
  "import { expect, test } from 'vitest';",
  "import { shout } from '../src/shout.js';",
  "test('shouts', () => expect(shout('hi')).toBe('HI!'));",
);
const testOf = (name: string) =>
  linesOf(
    "import { expect, test } from 'vitest';",
    `import { ${name} } from '../src/text.js';`,
    `test('slug', () => expect(${name}('A B')).toBe('a-b'));`,
  );

describe('ending the test process under vitest', () => {
  it('names each route that ended a fork at its file and line, with the test it cut short', async () => {
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'src/text.js': slugs(() => ["return text.toLowerCase().replace(' ', '-');"]),
        ...Object.fromEntries(NAMES.map((name) => [`test/${name}.test.js`, testOf(name)])),
      },
      player: {
        // Each function's second line ends the process (lines 2, 7 and 12).
        'src/text.js': slugs((name) => [
          `if (text !== text.toLowerCase()) ${ROUTES[name]}`,
          "return text.replace(' ', '-');",
        ]),
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
      beforePin: borrowNodeModules,
    });
    const refused = await task.approve();
    expect(refused.result.isError).toBe(true);
    expect(refused.run.tests).toContainEqual(
      expect.objectContaining({
        id: 'test/exit.test.js > slug',
        status: 'failed',
        message: expect.stringMatching(/process\.exit unexpectedly called with "0"/),
      }),
    );
    for (const [index, name] of NAMES.entries()) {
      if (name === 'exit') continue;
      const line = 2 + index * 5;
      expect(refused.run.tests).toContainEqual(
        expect.objectContaining({
          id: `coachgate: process ended at src/text.js:${line}`,
          status: 'error',
          message: expect.stringMatching(
            new RegExp(
              `^process\\.${name}\\(.*ended the test process while test/${name}\\.test\\.js > slug ran`,
            ),
          ),
        }),
      );
      expect(refused.text).toContain(`coachgate: process ended at src/text.js:${line}`);
    }
  }, 300_000);

  it('approves a CLI that exits with the status its main returns', async () => {
    const cli = linesOf(
      "import { pathToFileURL } from 'node:url';",
      '// 0 when every argument is a number, else 2.',
      'export const main = (args) => (args.every((arg) => /^\\d+$/.test(arg)) ? 0 : 2);',
      'if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href)',
      '  process.exit(main(process.argv.slice(2)));',
    );
    const cliTest = linesOf(
      "import { expect, test } from 'vitest';",
      "import { spawnSync } from 'node:child_process';",
      "import { main } from '../src/cli.js';",
      "test('main', () => expect([main(['12']), main(['x'])]).toEqual([0, 2]));",
      "test('exit status', () => {",
      "  const run = (arg) => spawnSync(process.execPath, ['src/cli.js', arg]).status;",
      "  expect([run('7'), run('no')]).toEqual([0, 2]);",
      '});',
    );
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'src/cli.js': 'export const main = () => 0;\n',
        'test/cli.test.js': cliTest,
      },
      player: { 'src/cli.js': cli, 'src/shout.js': SHOUT, 'test/shout.test.js': SHOUT_TEST },
      criterion: 'shout(text) returns the text in upper case with "!"',
      evidence: [{ criterion: 'AC-001', test: 'shouts' }],
      beforePin: borrowNodeModules,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.run.tests.map((each: { id: string }) => each.id).join('\n')).not.toMatch(
      /process ended/,
    );
  }, 300_000);
});
