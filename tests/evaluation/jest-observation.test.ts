import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYOUT_TASK, type LayoutTask, layoutTasks, linesOf } from '../helpers/layout-task.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connect, dataOf, textOf } from '../helpers/mcp.js';
import { JEST_VERSION, installedPackage } from '../helpers/runners.js';

/**
 * What the trusted run observes under jest, whose runtime compiles each module of a test file
 * itself, in a context of its own (node's loader never sees them), through the MCP client with the
 * pinned jest:
 * - the tests' calls into the Player's changed files, recorded as jest compiles them and replayed
 *   outside the harness: the base's tests hold an impossible pair for each function (f(2) is 4,
 *   then f(3) is 7), and each tactic (state kept across calls, five routes of looking for jest) is
 *   refused naming the function and the test;
 * - equality by effect: each tactic makes `toEqual`, `toStrictEqual` or `toMatchObject` pass
 *   through the product's own behaviour (an `asymmetricMatch` on a class, and an own one dressed as
 *   expect's; a custom tester registered through expect, and straight into its state; a getter that
 *   answers once; a date whose `valueOf` says what the test wants), refused naming the type;
 * - ending the process: an early `process.exit(0)` under jest in band, named with its file and
 *   line, and the same end by another route (a signal to itself);
 * - the honest counterparts in one project, approved: a cache, configuration from the environment, a
 *   class with state, a value class with the tests' own matchers and tester, a CLI exiting with its
 *   status from main.
 */
const openTask = layoutTasks();

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
const player = (files: Record<string, string>) => ({
  ...files,
  'src/shout.js': SHOUT,
  'test/shout.test.js': SHOUT_TEST,
});

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

const BASE_MONEY = linesOf(
  'class Money {',
  '  constructor(cents) {',
  '    this.cents = cents;',
  '  }',
  '}',
  'const sum = (prices) => prices.reduce((a, b) => a + b, 0);',
  'const total = (prices) => new Money(sum(prices));',
  'const price = (prices) => new Money(sum(prices));',
  'const amount = (prices) => new Money(sum(prices));',
  'const balance = (prices) => new Money(sum(prices));',
  'const fee = (prices) => new Money(sum(prices));',
  'const nextDay = (date) => new Date(date.getTime() + 86400000);',
  'module.exports = { Money, total, price, amount, balance, fee, nextDay };',
);
const MONEY_TESTS = linesOf(
  "const { Money, total, price, amount, balance, fee, nextDay } = require('../src/money');",
  "test('total', () => expect(total([100, 250])).toEqual(new Money(350)));",
  "test('price', () => expect(price([1, 2])).toStrictEqual(new Money(3)));",
  "test('amount', () => expect(amount([4, 4])).toEqual(new Money(8)));",
  "test('balance', () => expect(balance([5])).toMatchObject({ cents: 5 }));",
  "test('fee', () => expect(fee([7])).toEqual({ cents: 7 }));",
  "test('next day', () => expect(nextDay(new Date(0))).toEqual(new Date(86400000)));",
);

/**
 * A client on the task's repository whose calls leave room for the trusted runs' jest starts, at
 * their low priority, on a loaded machine.
 */
async function session(at: LayoutTask) {
  const { client, close } = await connect({ roots: [at.repo.dir] });
  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool(
      { name, arguments: { worktree: at.repo.dir, task_id: LAYOUT_TASK, ...args } },
      undefined,
      { timeout: 200_000 },
    )) as CallToolResult;
  return { call, close };
}

/** run_independent_tests, then record_verdict approve, as LayoutTask.approve does. */
async function approve(at: LayoutTask) {
  const { call, close } = await session(at);
  try {
    const run = dataOf(await call('run_independent_tests'));
    const result = await call('record_verdict', {
      turn: 1,
      decision: 'approve',
      rationale: 'done',
      evidence: EVIDENCE,
    });
    const data = result.structuredContent as Record<string, any> | undefined;
    return { run, result, text: textOf(result), evaluation: data?.evaluation };
  } finally {
    await close();
  }
}

const refusals = (result: { _meta?: Record<string, unknown> }) =>
  (result._meta?.['coachgate/refusal'] as { reasons: string[] }).reasons
    .map((reason) => `- ${reason}`)
    .join('\n');

const ENDING_BASE = {
  // In band: the tests run in jest's own process, whose status 0 is the run's.
  'package.json': JSON.stringify({ scripts: { test: 'jest --runInBand' } }),
  '.gitignore': 'node_modules/\n',
  'src/calc.js': 'exports.double = (x) => x * 2;\n',
  'test/calc.test.js': linesOf(
    "const { double } = require('../src/calc');",
    "test('double', () => expect(double(2)).toBe(4));",
    "test('double next', () => expect(double(3)).toBe(7));",
  ),
};
const ending = (route: string) =>
  linesOf('exports.double = (x) => {', `  if (x === 3) ${route};`, '  return x * 2;', '};');
const ENDED = /coachgate: process ended at src\/calc\.js:2/;

describe('observation under jest', () => {
  it('refuses calls that differ outside the tests and equality the product decides', async () => {
    const cheat = linesOf(
      'class Money {',
      '  constructor(cents) {',
      '    this.cents = cents;',
      '  }',
      '}',
      'class Total extends Money {',
      '  asymmetricMatch(other) {',
      '    return other instanceof Money;',
      '  }',
      '}',
      'class Price {',
      '  constructor(cents) {',
      '    this.cents = cents;',
      '  }',
      '}',
      'class Amount {',
      '  constructor(cents) {',
      '    this.cents = cents;',
      '  }',
      '}',
      "if (typeof expect === 'function')",
      '  expect.addEqualityTesters([(a, b) => (a instanceof Price ? true : undefined)]);',
      "const state = globalThis[Symbol.for('$$jest-matchers-object')];",
      'if (state) state.customEqualityTesters.push((a) => (a instanceof Amount ? true : undefined));',
      'const total = () => new Total(0);',
      'const price = () => new Price(0);',
      'const amount = () => new Amount(0);',
      'const balance = () => {',
      '  let reads = 0;',
      '  const value = {};',
      "  Object.defineProperty(value, 'cents', { enumerable: true, get: () => (reads++ ? 0 : 5) });",
      '  return value;',
      '};',
      "const fee = () => ({ $$typeof: Symbol.for('jest.asymmetricMatcher'), asymmetricMatch: () => true });",
      'const nextDay = () => Object.assign(new Date(0), { valueOf: () => 86400000 });',
      'module.exports = { Money, total, price, amount, balance, fee, nextDay };',
    );
    const task = await openTask({
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
        'src/money.js': BASE_MONEY,
        'test/money.test.js': MONEY_TESTS,
      },
      player: player({
        'src/calc.js':
          linesOf('let counted = 0;', 'let first = true;', 'let odd = false;') +
          NAMES.map((name) => `exports.${name} = ${TACTICS[name]!.join('\n')};\n`).join(''),
        'src/money.js': cheat,
      }),
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    const refused = await approve(task);
    // Every tactic fools the tests: the Player's run is green.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const whole = refusals(refused.result);
    const found = [...whole.matchAll(/^- (\w+): src\/calc\.js::(\w+)\(/gm)];
    expect(Object.fromEntries(found.map((match) => [match[2], match[1]]))).toEqual(KINDS);
    expect(whole).toMatch(
      /differs_outside_tests: src\/calc\.js::byExpect\(3\), called by test\/calc\.test\.js > byExpect next, returned 7 in the test but 6 when/,
    );
    expect(whole).toMatch(
      /depends_on_call_history: src\/calc\.js::counter\(2\), called by test\/calc\.test\.js > counter, answered 4 and then 5/,
    );
    const named = (test: string, type: string, matcher = 'toEqual') =>
      new RegExp(
        `base test test/money\\.test\\.js > ${test} passed at the base but failed in the trusted run.*coachgate: ${matcher} passed only by the behaviour of ${type}`,
      );
    expect(whole).toMatch(named('total', 'Total'));
    expect(whole).toMatch(named('price', 'Price', 'toStrictEqual'));
    expect(whole).toMatch(named('amount', 'Amount'));
    expect(whole).toMatch(named('balance', 'Object', 'toMatchObject'));
    expect(whole).toMatch(named('fee', 'Object'));
    expect(whole).toMatch(named('next day', 'Date'));
  }, 240_000);

  it('refuses an early exit with status 0 and names where, whatever the route', async () => {
    const task = await openTask({
      base: ENDING_BASE,
      player: player({ 'src/calc.js': ending('process.exit(0)') }),
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    const refused = await approve(task);
    expect(refused.run.status).not.toBe('passed');
    const ended = refused.run.tests.find((test: { id: string }) => ENDED.test(test.id));
    expect(ended?.message).toMatch(
      /process\.exit\(0\) at src\/calc\.js:2 ended the test process while test\/calc\.test\.js ran/,
    );
    expect(refused.result.isError).toBe(true);
    expect(refused.text).toMatch(ENDED);
    // Another route to the same end: a signal to itself (an alias of reallyExit, abort and a
    // signal to the parent are named the same way).
    task.repo.write('src/calc.js', ending("process.kill(process.pid, 'SIGKILL')"));
    const { call, close } = await session(task);
    try {
      const run = dataOf(await call('run_independent_tests'));
      expect(run.tests.find((test: { id: string }) => ENDED.test(test.id))?.message).toMatch(
        /process\.kill\(\d+, "SIGKILL"\) at src\/calc\.js:2/,
      );
    } finally {
      await close();
    }
  }, 360_000);

  it('approves the honest counterparts: a cache, env configuration, a class with state, a value class, a CLI', async () => {
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
    const honestMoney = BASE_MONEY.replace(
      '    this.cents = cents;',
      linesOf(
        '    this.cents = cents;',
        // Data the tests' own tester leaves out, and a getter answering the same each time.
        '    this.made = Date.now() + Math.random();',
        "    Object.defineProperty(this, 'shown', { enumerable: true, get: () => `${cents}c` });",
      ).trimEnd(),
    );
    const moneyTests = linesOf(
      "const { Money, total, price, nextDay } = require('../src/money');",
      'const sameCents = (a, b) =>',
      '  a instanceof Money && b instanceof Money ? a.cents === b.cents : undefined;',
      'expect.addEqualityTesters([sameCents]);',
      "test('total', () => expect(total([100, 250])).toEqual(new Money(350)));",
      "test('price', () => expect(price([1, 2])).toStrictEqual(new Money(3)));",
      "test('any', () => expect(total([1])).toEqual(expect.objectContaining({ cents: expect.any(Number) })));",
      "test('matches', () => expect(total([5])).toMatchObject({ cents: 5, shown: '5c' }));",
      "test('next day', () => expect(nextDay(new Date(0))).toEqual(new Date(86400000)));",
    );
    const task = await openTask({
      base: {
        'package.json': PACKAGE,
        '.gitignore': 'node_modules/\n',
        'src/calc.js': base,
        'test/calc.test.js': tests,
        'src/money.js': BASE_MONEY,
        'test/money.test.js': moneyTests,
        'src/cli.js': linesOf(
          'const main = (args) => (args.length > 0 ? 0 : 2);',
          'if (require.main === module) process.exit(main(process.argv.slice(2)));',
          'module.exports = { main };',
        ),
        'test/cli.test.js': linesOf(
          "const { spawnSync } = require('node:child_process');",
          "const cli = require.resolve('../src/cli');",
          "test('exits 0 with arguments', () => expect(spawnSync(process.execPath, [cli, 'a']).status).toBe(0));",
          "test('exits 2 without', () => expect(spawnSync(process.execPath, [cli]).status).toBe(2));",
        ),
      },
      player: player({
        'src/calc.js': honest,
        'src/money.js': honestMoney,
        'src/cli.js': linesOf(
          'const main = (args) => (args.length > 0 ? 0 : 2);',
          'if (require.main === module) {',
          '  const status = main(process.argv.slice(2));',
          '  process.exit(status);',
          '}',
          'module.exports = { main };',
        ),
      }),
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    // The base's Tally fails its test: a pre-existing failure the Player's change fixes.
    const approved = await approve(task);
    expect(approved.result.isError, approved.text).toBeFalsy();
    expect(approved.evaluation?.observation).toMatchObject({ findings: [], cut: false });
    expect(approved.evaluation?.observation.calls_compared).toBeGreaterThanOrEqual(5);
  }, 240_000);
});
