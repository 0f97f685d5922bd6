import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { JEST_VERSION, installedPackage } from '../helpers/runners.js';

/**
 * The fail-to-pass and new-tests runs of a vitest, jest or node --test project run only the Player's
 * test files (the baseline ran the rest of the suite), through the MCP client with the real runners:
 * an honest change is approved, a Player's test that passes on the base code is still caught, and
 * the runs' logs name only the Player's test file.
 */
const TASK = 'TASK-018';
let repo: TempRepo;
let client: Client;
let close: () => Promise<void>;
afterEach(async () => {
  await close?.();
  repo?.remove();
});

type Runner = 'vitest' | 'jest' | 'node';
const ESM = (runner: Runner) => runner !== 'jest';
const importing = (runner: Runner, names: string, from: string) =>
  ESM(runner)
    ? `import { ${names} } from '${from}';\n`
    : `const { ${names} } = require('${from.replace(/\.js$/, '')}');\n`;
const TEST_API: Record<Runner, string> = {
  vitest: "import { expect, test } from 'vitest';\n",
  jest: '',
  node: "import test from 'node:test';\nimport assert from 'node:assert/strict';\n",
};
const testApi = (runner: Runner) => TEST_API[runner];
const equal = (runner: Runner, actual: string, expected: string) =>
  runner === 'node'
    ? `assert.equal(${actual}, ${expected});`
    : `expect(${actual}).toBe(${expected});`;
/** A test's id: node's name no file. */
const idOf = (runner: Runner, file: string, name: string) =>
  runner === 'node' ? name : `${file} > ${name}`;

const LIB = (runner: Runner, shout: boolean) => {
  const greet = 'function greet(name) {\n  return `Hello, ${name}!`;\n}\n';
  const loud = shout ? 'function shout(text) {\n  return `${text.toUpperCase()}!`;\n}\n' : '';
  const names = shout ? 'greet, shout' : 'greet';
  return ESM(runner)
    ? `export ${greet}${loud ? `export ${loud}` : ''}`
    : `${greet}${loud}module.exports = { ${names} };\n`;
};
const GREET_TEST = (runner: Runner) =>
  `${testApi(runner)}${importing(runner, 'greet', '../src/lib.js')}\ntest('greets by name', () => {\n  ${equal(runner, "greet('Ada')", "'Hello, Ada!'")}\n});\n`;
const OTHER_TEST = (runner: Runner) =>
  `${testApi(runner)}\ntest('adds', () => {\n  ${equal(runner, '1 + 1', '2')}\n});\n`;
const SHOUTS = (runner: Runner) =>
  `test('shouts', () => {\n  ${equal(runner, "shout('hi')", "'HI!'")}\n});\n`;
/** The Player's test file: `shouts` needs the change; `greets loudly` passes on the base code too. */
const SHOUT_TEST = (runner: Runner, alsoOnBase: boolean) =>
  `${testApi(runner)}${importing(runner, alsoOnBase ? 'greet' : 'shout', '../src/lib.js')}\n${
    alsoOnBase
      ? `test('greets loudly', () => {\n  ${equal(runner, "greet('ADA')", "'Hello, ADA!'")}\n});\n`
      : SHOUTS(runner)
  }`;

async function project(
  runner: Runner,
  script: string,
  player: Record<string, string>,
  base: Record<string, string> = {},
) {
  repo = makeRepo({
    'package.json': JSON.stringify(
      { name: 'greet', ...(ESM(runner) ? { type: 'module' } : {}), scripts: { test: script } },
      null,
      2,
    ),
    '.gitignore': 'node_modules/\n',
    'src/lib.js': LIB(runner, false),
    'test/lib.test.js': GREET_TEST(runner),
    'test/other.test.js': OTHER_TEST(runner),
    ...base,
    [`.guardkit/tasks/backlog/${TASK}.md`]: `---\nid: ${TASK}\ntitle: T\n---\n## Acceptance Criteria\n- [ ] AC-001: shout(text) shouts\n`,
  });
  const modules = runner === 'jest' ? installedPackage('jest', JEST_VERSION) : path.resolve('.');
  execFileSync('ln', [
    '-s',
    path.join(modules, 'node_modules'),
    path.join(repo.dir, 'node_modules'),
  ]);
  repo.git('checkout', '-q', '-b', `autobuild/${TASK}`);
  for (const [file, content] of Object.entries(player)) repo.write(file, content);
  ({ client, close } = await connect({ roots: [repo.dir] }));
  await call('record_player_report', {
    turn: 1,
    report: {
      files_modified: Object.keys(player),
      tests_written: Object.keys(player).filter((file) => file.startsWith('test/')),
      tests_passed: true,
      requirements_addressed: ['AC-001'],
    },
  });
}

const call = (name: string, args: Record<string, unknown>) =>
  callTool(client, name, { worktree: repo.dir, task_id: TASK, ...args });

async function approve(test: string) {
  const run = dataOf(await call('run_independent_tests', { timeout_s: 120 }));
  const result = await call('record_verdict', {
    turn: 1,
    decision: 'approve',
    rationale: 'done',
    evidence: [{ criterion: 'AC-001', test }],
  });
  return { run, result, text: textOf(result) };
}

/** The logs of the task's runs by that name (`<run id>-fail-to-pass.log`), oldest first. */
function runLogs(name: string): string[] {
  const directory = path.join(repo.dir, '.guardkit/autobuild', TASK, 'runs');
  return readdirSync(directory)
    .filter((file) => file.endsWith(`-${name}.log`))
    .sort()
    .map((file) => readFileSync(path.join(directory, file), 'utf8'));
}

/** The log of the task's one run by that name. */
function runLog(name: string): string {
  const logs = runLogs(name);
  expect(logs).toHaveLength(1);
  return logs[0]!;
}

/** The log names the Player's test file and none of the base's (which the baseline ran). */
function expectOnlyPlayerFile(runner: Runner, log: string) {
  // node's report names tests, not files (but a file that fails to load, by its path).
  const [player, ...base] =
    runner === 'node'
      ? [/shout\.test\.js|shouts|greets loudly/, 'adds', 'greets by name']
      : [/shout\.test\.js/, 'other.test.js', 'lib.test.js'];
  expect(log).toMatch(player!);
  for (const name of base) expect(log).not.toContain(name);
}

const SCENARIOS: [Runner, string][] = [
  ['vitest', 'vitest run'],
  // Through npm: the script's only command is vitest, so the files reach it as they are appended.
  ['vitest', 'NODE_ENV=test vitest run'],
  ['jest', 'jest'],
  // Its ids do not name the file: limited only where the Player's test files are all new.
  ['node', 'node --test'],
];

describe.each(SCENARIOS)('limited runs with %s (scripts.test: %s)', (runner, script) => {
  it('approves an honest change, running only its test file on the base code and in new-tests', async () => {
    await project(runner, script, {
      'src/lib.js': LIB(runner, true),
      'test/shout.test.js': SHOUT_TEST(runner, false),
    });
    const { run, result, text } = await approve(idOf(runner, 'test/shout.test.js', 'shouts'));
    expect(run.status).toBe('passed');
    expect(result.isError, text).toBeFalsy();
    const data = dataOf(result);
    expect(data.status).toBe('approved');
    // On the base code: the Player's test failed in the limited run; the base's own tests, from
    // the baseline, passed (as a run of the whole suite would have found).
    expect([...data.evaluation.passing_on_base_code].sort()).toEqual(
      [
        idOf(runner, 'test/lib.test.js', 'greets by name'),
        idOf(runner, 'test/other.test.js', 'adds'),
      ].sort(),
    );
    expect(runLog('baseline')).toContain(runner === 'node' ? 'adds' : 'other.test.js');
    // The trusted run: the base's two tests on the Player's code.
    expect(data.evaluation.trusted.tests_total).toBe(2);
    expectOnlyPlayerFile(runner, runLog('fail-to-pass'));
    expectOnlyPlayerFile(runner, runLog('new-tests'));
  }, 240_000);

  it("still finds the Player's test that passes on the base code", async () => {
    await project(runner, script, {
      'src/lib.js': LIB(runner, true),
      'test/shout.test.js': SHOUT_TEST(runner, true),
    });
    const test = idOf(runner, 'test/shout.test.js', 'greets loudly');
    const { result, text } = await approve(test);
    expect(result.isError).toBe(true);
    expect(text).toContain(`test ${test} also passes on the base code`);
    expectOnlyPlayerFile(runner, runLog('fail-to-pass'));
  }, 240_000);
});

describe('node --test, with a base test file the Player changed', () => {
  it('runs the whole suite on the base code: the baseline could not tell that file apart', async () => {
    await project('node', 'node --test', {
      'src/lib.js': LIB('node', true),
      'test/lib.test.js': `${GREET_TEST('node').replace('{ greet }', '{ greet, shout }')}\n${SHOUTS('node')}`,
    });
    const { result, text } = await approve('shouts');
    expect(result.isError, text).toBeFalsy();
    // The changed file imports what the base lacks: none of its tests passes on the base code.
    expect(dataOf(result).evaluation.passing_on_base_code).toEqual(['adds']);
    const log = runLog('fail-to-pass');
    expect(log).toContain('✔ adds');
    expect(log).toContain('lib.test.js');
  }, 240_000);
});

describe('a vitest rooted in the test folder (its ids do not start with the test files)', () => {
  it("runs the whole suite on the base code after the limited run, and still finds the Player's test that passes there", async () => {
    await project(
      'vitest',
      'vitest run',
      { 'src/lib.js': LIB('vitest', true), 'test/shout.test.js': SHOUT_TEST('vitest', true) },
      { 'vitest.config.js': "export default { test: { root: 'test' } };\n" },
    );
    const { result, text } = await approve('shout.test.js > greets loudly');
    expect(result.isError).toBe(true);
    expect(text).toMatch(/test shout\.test\.js > greets loudly also passes on the base code/);
    const [limited, whole] = runLogs('fail-to-pass');
    expect(limited).not.toContain('lib.test.js');
    expect(whole).toContain('lib.test.js');
  }, 240_000);
});

describe('a script that runs more than its runner', () => {
  it('runs the whole suite on the base code: appended files would reach only the last command', async () => {
    await project('vitest', 'vitest run test/other.test.js && vitest run', {
      'src/lib.js': LIB('vitest', true),
      'test/shout.test.js': SHOUT_TEST('vitest', false),
    });
    const { result, text } = await approve('test/shout.test.js > shouts');
    expect(result.isError, text).toBeFalsy();
    const log = runLog('fail-to-pass');
    expect(log).toContain('shout.test.js');
    expect(log).toContain('lib.test.js');
  }, 240_000);
});
