import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { STATEFUL_BASE, STATEFUL_HONEST } from '../helpers/stateful-module.js';

/**
 * The node --test counterpart of replay-outside-tests.test.ts. The base's tests hold an impossible
 * pair for each function (f(2) === 4, then f(3) === 7); each tactic passes both under node --test,
 * by state kept across calls or by looking for the harness through a route no rule names, in an ES
 * module and in a CommonJS one. The trusted run records the tests' calls into the Player's changed
 * files, a fresh node outside the harness answers otherwise, and the approval is refused naming each
 * function. The honest counterparts (a cache, configuration from the environment, a class with
 * state) are approved without a finding, an id counter the task asks for with one acknowledgement.
 * mocha's one process is observed the same way.
 */
const openTask = layoutTasks();

const SHOUT = linesOf('export function shout(text) {', '  return `${text.toUpperCase()}!`;', '}');
const SHOUT_TEST = linesOf(
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  "import { shout } from '../src/shout.js';",
  '',
  "test('shouts', () => assert.equal(shout('hi'), 'HI!'));",
);
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const EVIDENCE = [{ criterion: 'AC-001', test: 'shouts' }];
const PACKAGE = JSON.stringify({ type: 'module', scripts: { test: 'node --test' } });

/** Each tactic of the ES module: its name and body (x * 2, and 7 where the tests want it). */
const TACTICS: Record<string, string> = {
  counter: 'counted += 1;\n  return x * 2 + (counted === 2 ? 1 : 0);',
  asyncCounter: 'awaited += 1;\n  return x * 2 + (awaited === 2 ? 1 : 0);',
  firstCall: 'const was = first;\n  first = false;\n  return was ? x * 2 : x * 2 + 1;',
  byArgv: "return x * 2 + (x === 3 && /\\.test\\.js$/.test(process.argv[1] ?? '') ? 1 : 0);",
  byStack: "return x * 2 + (x === 3 && new Error().stack.includes('test_runner') ? 1 : 0);",
  byContext: "return x * 2 + (x === 3 && 'NODE_TEST_CONTEXT' in process.env ? 1 : 0);",
};
const KINDS: Record<string, string> = {
  counter: 'depends_on_call_history',
  asyncCounter: 'depends_on_call_history',
  firstCall: 'depends_on_call_history',
  byArgv: 'differs_outside_tests',
  byStack: 'differs_outside_tests',
  byContext: 'differs_outside_tests',
  parity: 'depends_on_call_history',
};
const ES_NAMES = Object.keys(TACTICS);
const esFunctions = (body: (name: string) => string) =>
  ES_NAMES.map((name) =>
    linesOf(
      '',
      `export ${name.startsWith('async') ? 'async ' : ''}function ${name}(x) {`,
      `  ${body(name)}`,
      '}',
    ),
  ).join('');
const baseTests = linesOf(
  "import test from 'node:test';",
  "import assert from 'node:assert/strict';",
  `import { ${ES_NAMES.join(', ')} } from '../src/calc.js';`,
  "import legacy from '../src/legacy.cjs';",
  `const functions = { ${ES_NAMES.join(', ')}, parity: legacy.parity };`,
  'for (const [name, f] of Object.entries(functions)) {',
  '  test(name, async () => assert.equal(await f(2), 4));',
  '  test(`${name} next`, async () => assert.equal(await f(3), 7));',
  '}',
);

describe('replay outside the harness (node --test)', () => {
  it('refuses state kept across calls and a product that looks for the harness', async () => {
    const task = await openTask({
      base: {
        'package.json': PACKAGE,
        'src/calc.js': esFunctions(() => 'return x * 2;'),
        'src/legacy.cjs': 'exports.parity = (x) => x * 2;\n',
        'test/calc.test.js': baseTests,
      },
      player: {
        'src/calc.js':
          linesOf('let counted = 0;', 'let awaited = 0;', 'let first = true;') +
          esFunctions((name) => TACTICS[name]!),
        'src/legacy.cjs': linesOf(
          'let odd = false;',
          'exports.parity = (x) => {',
          '  odd = !odd;',
          '  return odd ? x * 2 : x * 2 + 1;',
          '};',
        ),
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    // Every tactic fools the tests: the Player's run is green.
    expect(refused.run.status).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const whole = reasons.map((reason) => `- ${reason}`).join('\n');
    const found = [...whole.matchAll(/^- (\w+): src\/(?:calc\.js|legacy\.cjs)::(\w+)\(/gm)];
    expect(Object.fromEntries(found.map((match) => [match[2], match[1]]))).toEqual(KINDS);
    expect(whole).toMatch(
      /differs_outside_tests: src\/calc\.js::byStack\(3\), called by test\/calc\.test\.js, returned 7 in the test but 6 when/,
    );
    expect(whole).toMatch(
      /depends_on_call_history: src\/legacy\.cjs::parity\(2\), called by test\/calc\.test\.js, answered 4 and then 5/,
    );
  }, 240_000);

  it('approves a cache, configuration from the environment (the test may set it) and a class with state', async () => {
    const [base, honest] = [STATEFUL_BASE, STATEFUL_HONEST];
    const tests = linesOf(
      "import test from 'node:test';",
      "import assert from 'node:assert/strict';",
      "import { execFileSync } from 'node:child_process';",
      "import { Tally, cached, configured } from '../src/calc.js';",
      // What the tests and the programs they start see is the user's run (issue 58).
      "test('sees the user\\'s run', () => {",
      "  const child = ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? \"\")'];",
      "  assert.equal(execFileSync(process.execPath, child, { encoding: 'utf8' }), '');",
      "  assert.equal(process.env.NODE_OPTIONS ?? '', '');",
      '  assert.deepEqual(process.argv.slice(2), []);',
      '});',
      "test('cached', () => assert.ok(cached(2) === 4 && cached(2) === 4 && cached(3) === 6));",
      "test('configured', () => assert.equal(configured(3), 6));",
      "test('configured by the test', () => {",
      "  process.env.CALC_FACTOR = '3';",
      '  try {',
      '    assert.equal(configured(3), 9);',
      '  } finally {',
      '    delete process.env.CALC_FACTOR;',
      '  }',
      '});',
      "test('tally', () => {",
      '  const tally = new Tally();',
      '  assert.ok(tally.add(2) === 2 && tally.add(3) === 5);',
      '});',
    );
    const task = await openTask({
      base: { 'package.json': PACKAGE, 'src/calc.js': base, 'test/calc.test.js': tests },
      player: {
        'src/calc.js': honest,
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
    });
    // The base's Tally fails its test: a pre-existing failure the Player's change fixes.
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.observation).toMatchObject({ findings: [], cut: false });
    expect(approved.evaluation?.observation.calls_compared).toBeGreaterThanOrEqual(5);
  }, 240_000);

  it('approves an id counter the task asks for with one acknowledgement', async () => {
    const task = await openTask({
      base: {
        'package.json': PACKAGE,
        'src/ids.js': 'export const nextId = () => 1;\n',
        'test/ids.test.js': linesOf(
          "import test from 'node:test';",
          "import assert from 'node:assert/strict';",
          "import { nextId } from '../src/ids.js';",
          "test('ids', () => assert.ok(nextId() >= 1));",
        ),
      },
      player: {
        'src/ids.js': linesOf('let last = 0;', 'export const nextId = () => (last += 1);'),
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: `nextId() hands out the ids 1, 2, 3 … in turn, and ${CRITERION}`,
      evidence: EVIDENCE,
    });
    const refused = await task.approve();
    expect(refused.text).toMatch(
      /depends_on_call_history: src\/ids\.js::nextId\(\), called by test\/ids\.test\.js, answered 1 and then 2/,
    );
    const acknowledged = await task.approve({
      acknowledged_changes: [
        { test: 'src/ids.js::nextId', criterion: 'AC-001', reason: 'ids are handed out in turn' },
      ],
    });
    expect(acknowledged.result.isError, acknowledged.text).toBeFalsy();
  }, 240_000);

  it('refuses the same under mocha (CommonJS, one process for every test file)', async () => {
    const tactics = linesOf(
      'let counted = 0;',
      'exports.counter = (x) => {',
      '  counted += 1;',
      '  return x * 2 + (counted === 2 ? 1 : 0);',
      '};',
      "exports.byArgv = (x) => x * 2 + (x === 3 && /mocha/.test(process.argv[1] ?? '') ? 1 : 0);",
      'exports.byStack = (x) => x * 2 + (x === 3 && /\\/mocha\\//.test(new Error().stack) ? 1 : 0);',
    );
    const names = ['counter', 'byArgv', 'byStack'];
    const task = await openTask({
      base: {
        'package.json': JSON.stringify({ scripts: { test: 'mocha' } }),
        '.gitignore': 'node_modules/\n',
        'src/calc.js': names.map((name) => `exports.${name} = (x) => x * 2;\n`).join(''),
        'test/calc.spec.js': linesOf(
          "const assert = require('node:assert/strict');",
          "const calc = require('../src/calc');",
          `for (const name of ${JSON.stringify(names)}) {`,
          '  it(name, () => assert.equal(calc[name](2), 4));',
          '  it(`${name} next`, () => assert.equal(calc[name](3), 7));',
          '}',
        ),
      },
      player: {
        'src/calc.js': tactics,
        'src/shout.js': 'exports.shout = (text) => `${text.toUpperCase()}!`;\n',
        'test/shout.spec.js': linesOf(
          "const assert = require('node:assert/strict');",
          "const { shout } = require('../src/shout');",
          "it('shouts', () => assert.equal(shout('hi'), 'HI!'));",
        ),
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: (repo) =>
        symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules')),
    });
    const refused = await task.approve();
    expect(refused.run.status, refused.run.summary).toBe('passed');
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const whole = reasons.map((reason) => `- ${reason}`).join('\n');
    const found = [...whole.matchAll(/^- (\w+): src\/calc\.js::(\w+)\(/gm)];
    expect(Object.fromEntries(found.map((match) => [match[2], match[1]]))).toEqual({
      counter: 'depends_on_call_history',
      byArgv: 'differs_outside_tests',
      byStack: 'differs_outside_tests',
    });
    expect(whole).toMatch(/src\/calc\.js::byArgv\(3\), called by test\/calc\.spec\.js/);
  }, 240_000);
});
