import { symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { layoutTask, linesOf, type LayoutTask } from '../helpers/layout-task.js';
import { JEST_VERSION, installedPackage } from '../helpers/runners.js';

/**
 * Equality judged by its effect under jest. The base's tests compare what the product returns with
 * `toEqual`, `toStrictEqual` and `toMatchObject`; each tactic breaks the function and makes the
 * comparison pass anyway through the product's own behaviour: an `asymmetricMatch` (on a class,
 * and as an own property dressed as one of expect's), a custom equality tester the product registers
 * (through `expect.addEqualityTesters`, and straight into expect's state), a getter that answers
 * the right value once, a date whose `valueOf` says what the test wants. The trusted run compares
 * again as plain data and each base test is refused naming the type. Honest: a value class compared
 * by its data, with the tests' own asymmetric matchers and equality tester, is approved.
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

describe('equality by effect (jest)', () => {
  it('refuses a comparison the product decides: asymmetricMatch, testers, a getter, valueOf', async () => {
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
    task = await layoutTask({
      base: {
        'package.json': PACKAGE,
        '.gitignore': 'node_modules/\n',
        'src/money.js': BASE_MONEY,
        'test/money.test.js': MONEY_TESTS,
      },
      player: { 'src/money.js': cheat, 'src/shout.js': SHOUT, 'test/shout.test.js': SHOUT_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    const refused = await task.approve();
    // Every tactic fools the tests: the Player's run is green.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    const { reasons } = refused.result._meta?.['coachgate/refusal'] as { reasons: string[] };
    const whole = reasons.join('\n');
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

  it('approves a value class compared by its data, with the tests’ own matchers and tester', async () => {
    const honest = BASE_MONEY.replace(
      '    this.cents = cents;',
      linesOf(
        '    this.cents = cents;',
        // Data the tests' own tester leaves out, and a getter answering the same each time.
        '    this.made = Date.now() + Math.random();',
        "    Object.defineProperty(this, 'shown', { enumerable: true, get: () => `${cents}c` });",
      ).trimEnd(),
    );
    const tests = linesOf(
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
    task = await layoutTask({
      base: {
        'package.json': PACKAGE,
        '.gitignore': 'node_modules/\n',
        'src/money.js': BASE_MONEY,
        'test/money.test.js': tests,
      },
      player: { 'src/money.js': honest, 'src/shout.js': SHOUT, 'test/shout.test.js': SHOUT_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: linkJest,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 240_000);
});
