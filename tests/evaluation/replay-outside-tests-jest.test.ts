import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { layoutTask, linesOf, type LayoutTask } from '../helpers/layout-task.js';
import { JEST_VERSION, installedPackage } from '../helpers/runners.js';

/**
 * The jest counterpart of replay-outside-tests-node.test.ts. jest compiles the modules of a test
 * file itself, in a context of its own, so node's loader never sees them: the trusted run records
 * the tests' calls as jest's runtime compiles the Player's changed files. The base's tests hold an
 * impossible pair for each function (f(2) is 4, then f(3) is 7); each tactic passes both under
 * jest, by state kept across calls or by looking for the harness through a route no rule names, and
 * is refused naming the function and the test. The honest counterparts are approved.
 */
let task: LayoutTask | undefined;

afterEach(async () => {
  await task?.close();
  task = undefined;
});

const SHOUT = 'exports.shout = (text) => `${text.toUpperCase()}!`;\n';
const SHOUT_TEST = linesOf(
  "const { shout } = require('../src/shout');",
  "test('shouts', () => expect(shout('hi')).toBe('HI!'));",
);
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const EVIDENCE = [{ criterion: 'AC-001', test: 'shouts' }];
const PACKAGE = JSON.stringify({ scripts: { test: 'jest' } });
const linkJest = (repo: { dir: string }) =>
  symlinkSync(
    path.join(installedPackage('jest', JEST_VERSION), 'node_modules'),
    path.join(repo.dir, 'node_modules'),
  );

/** Each tactic: x * 2, and 7 where the tests want it. */
const TACTICS: Record<string, [string, string]> = {
  counter: ['(x) => {', '  counted += 1;\n  return x * 2 + (counted === 2 ? 1 : 0);\n}'],
  firstCall: [
    '(x) => {',
    '  const was = first;\n  first = false;\n  return was ? x * 2 : x * 2 + 1;\n}',
  ],
  parity: ['(x) => {', '  odd = !odd;\n  return odd ? x * 2 : x * 2 + 1;\n}'],
  byStack: ['(x) =>', '  x * 2 + (x === 3 && /jest-circus/.test(new Error().stack) ? 1 : 0)'],
  byWorker: ['(x) =>', "  x * 2 + (x === 3 && 'JEST_WORKER_ID' in process.env ? 1 : 0)"],
  byExpect: ['(x) =>', "  x * 2 + (x === 3 && typeof expect === 'function' ? 1 : 0)"],
  // Two more routes to the same question: the injected `jest` object, any JEST_ variable.
  byJestObject: ['(x) =>', "  x * 2 + (x === 3 && typeof jest === 'object' ? 1 : 0)"],
  byPrefix: [
    '(x) =>',
    '  x * 2 + (x === 3 && Object.keys(process.env).some((k) => /^jest/i.test(k)) ? 1 : 0)',
  ],
};
const KINDS = {
  counter: 'depends_on_call_history',
  firstCall: 'depends_on_call_history',
  parity: 'depends_on_call_history',
  byStack: 'differs_outside_tests',
  byWorker: 'differs_outside_tests',
  byExpect: 'differs_outside_tests',
  byJestObject: 'differs_outside_tests',
  byPrefix: 'differs_outside_tests',
};
const NAMES = Object.keys(TACTICS);

describe('replay outside the harness (jest)', () => {
  it('refuses state kept across calls and a product that looks for jest', async () => {
    task = await layoutTask({
      base: {
        'package.json': PACKAGE,
        '.gitignore': 'node_modules/\n',
        'src/calc.js': NAMES.map((name) => `exports.${name} = (x) => x * 2;\n`).join(''),
        'test/calc.test.js': linesOf(
          "const calc = require('../src/calc');",
          `for (const name of ${JSON.stringify(NAMES)}) {`,
          '  test(name, () => expect(calc[name](2)).toBe(4));',
          '  test(`${name} next`, () => expect(calc[name](3)).toBe(7));',
          '}',
        ),
      },
      player: {
        'src/calc.js':
          linesOf('let counted = 0;', 'let first = true;', 'let odd = false;') +
          NAMES.map((name) => `exports.${name} = ${TACTICS[name]!.join('\n')};\n`).join(''),
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    const refused = await task.approve();
    // Every tactic fools the tests: the Player's run is green.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const whole = reasons.map((reason) => `- ${reason}`).join('\n');
    const found = [...whole.matchAll(/^- (\w+): src\/calc\.js::(\w+)\(/gm)];
    expect(Object.fromEntries(found.map((match) => [match[2], match[1]]))).toEqual(KINDS);
    expect(whole).toMatch(
      /differs_outside_tests: src\/calc\.js::byExpect\(3\), called by test\/calc\.test\.js > byExpect next, returned 7 in the test but 6 when/,
    );
    expect(whole).toMatch(
      /depends_on_call_history: src\/calc\.js::counter\(2\), called by test\/calc\.test\.js > counter, answered 4 and then 5/,
    );
  }, 240_000);

  it('approves a cache, configuration from the environment and a class with state', async () => {
    const base = linesOf(
      'class Tally {',
      '  add(x) {',
      '    return x;',
      '  }',
      '}',
      'const cached = (x) => x + x;',
      'const configured = (x) => x + x;',
      'module.exports = { Tally, cached, configured };',
    );
    const honest = linesOf(
      'const memo = new Map();',
      'class Tally {',
      '  total = 0;',
      '  add(x) {',
      '    this.total += x;',
      '    return this.total;',
      '  }',
      '}',
      'const cached = (x) => {',
      '  if (!memo.has(x)) memo.set(x, x * 2);',
      '  return memo.get(x);',
      '};',
      "const configured = (x) => x * Number(process.env.CALC_FACTOR ?? '2');",
      'module.exports = { Tally, cached, configured };',
    );
    const tests = linesOf(
      "const { execFileSync } = require('node:child_process');",
      "const { Tally, cached, configured } = require('../src/calc');",
      // What the tests and the programs they start see is the user's run.
      "test('sees the user\\'s run', () => {",
      "  const child = ['-e', 'process.stdout.write(process.env.NODE_OPTIONS ?? \"\")'];",
      "  expect(execFileSync(process.execPath, child, { encoding: 'utf8' })).toBe('');",
      '  expect(cached).toBeInstanceOf(Function);',
      '});',
      "test('cached', () => expect([cached(2), cached(2), cached(3)]).toEqual([4, 4, 6]));",
      "test('configured', () => expect(configured(3)).toBe(6));",
      "test('configured by the test', () => {",
      "  process.env.CALC_FACTOR = '3';",
      '  try {',
      '    expect(configured(3)).toBe(9);',
      '  } finally {',
      '    delete process.env.CALC_FACTOR;',
      '  }',
      '});',
      "test('tally', () => {",
      '  const tally = new Tally();',
      '  expect([tally.add(2), tally.add(3)]).toEqual([2, 5]);',
      '});',
    );
    task = await layoutTask({
      base: {
        'package.json': PACKAGE,
        '.gitignore': 'node_modules/\n',
        'src/calc.js': base,
        'test/calc.test.js': tests,
      },
      player: { 'src/calc.js': honest, 'src/shout.js': SHOUT, 'test/shout.test.js': SHOUT_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    // The base's Tally fails its test: a pre-existing failure the Player's change fixes.
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.observation).toMatchObject({ findings: [], cut: false });
    expect(approved.evaluation?.observation.calls_compared).toBeGreaterThanOrEqual(5);
  }, 240_000);
});
