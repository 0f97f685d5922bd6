import { describe, expect, it } from 'vitest';
import { layoutTasks, linesOf } from '../helpers/layout-task.js';
import { borrowNodeModules, VITEST_PROJECT } from '../helpers/vitest-project.js';

/**
 * Equality by effect under vitest (the pinned one this repository tests with). Each broken
 * function passes a base test's `toEqual` or `toMatchObject` because of the product itself: an
 * `asymmetricMatch` on the object it returns (a literal, a class), an equality tester product code
 * adds (through `expect.addEqualityTesters`, and pushed into vitest's matcher state directly). In
 * the trusted run each passing comparison is read again as plain data and fails, naming the test,
 * the comparison and the type; an honest value class compared with `toEqual` is approved.
 */
const openTask = layoutTasks();

const SHOUT = linesOf('export function shout(text) {', '  return `${text.toUpperCase()}!`;', '}');
const SHOUT_TEST = linesOf(
  "import { expect, test } from 'vitest';",
  "import { shout } from '../src/shout.js';",
  "test('shouts', () => expect(shout('hi')).toBe('HI!'));",
);
const CRITERION = 'shout(text) returns the text in upper case with "!"';
const EVIDENCE = [{ criterion: 'AC-001', test: 'shouts' }];
const BASE_SHOP = linesOf(
  'export class Money {',
  '  constructor(cents) {',
  '    this.cents = cents;',
  '  }',
  '}',
  'export const price = (cents) => ({ cents, text: `$${(cents / 100).toFixed(2)}` });',
  'export const order = (id) => ({ id, items: [] });',
  'export const refund = (cents) => new Money(-cents);',
);
const BASE_TESTS = {
  'test/shop.test.js': linesOf(
    "import { expect, test } from 'vitest';",
    "import { price, order } from '../src/shop.js';",
    "test('price', () => expect(price(250)).toEqual({ cents: 250, text: '$2.50' }));",
    "test('order', () => expect(order('a')).toMatchObject({ id: 'a', items: [] }));",
  ),
  'test/sum.test.js': linesOf(
    "import { expect, test } from 'vitest';",
    "import { sum } from '../src/sum.js';",
    "test('sum', () => expect(sum([1, 2])).toEqual(3));",
  ),
  'test/count.test.js': linesOf(
    "import { expect, test } from 'vitest';",
    "import { count } from '../src/count.js';",
    "test('count', () => expect(count('a b c')).toEqual(3));",
  ),
};

describe('equality by effect under vitest', () => {
  it('refuses a comparison the product decided, naming the test and the type', async () => {
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'src/shop.js': BASE_SHOP,
        'src/sum.js': 'export const sum = (xs) => xs.reduce((a, b) => a + b, 0);\n',
        'src/count.js': "export const count = (text) => text.split(' ').length;\n",
        ...BASE_TESTS,
      },
      player: {
        'src/shop.js': linesOf(
          BASE_SHOP,
          'class Order {',
          '  asymmetricMatch() {',
          '    return true;',
          '  }',
          '}',
        )
          .replace(
            'export const price = (cents) => ({ cents, text: `$${(cents / 100).toFixed(2)}` });',
            'export const price = (cents) => ({ cents, asymmetricMatch: () => true });',
          )
          .replace(
            'export const order = (id) => ({ id, items: [] });',
            'export const order = () => new Order();',
          ),
        'src/sum.js': linesOf(
          "globalThis[Symbol.for('expect-global')]?.addEqualityTesters([() => true]);",
          'export const sum = (xs) => xs.length;',
        ),
        'src/count.js': linesOf(
          "const state = globalThis[Symbol.for('$$jest-matchers-object')];",
          'state?.customEqualityTesters?.push((a, b) => typeof a === typeof b);',
          'export const count = (text) => text.length;',
        ),
        'src/shout.js': SHOUT,
        'test/shout.test.js': SHOUT_TEST,
      },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: borrowNodeModules,
    });
    const refused = await task.approve();
    // Every one fools the tests: the Player's run is green.
    expect(refused.run.status, refused.run.summary).toBe('passed');
    expect(refused.result.isError).toBe(true);
    for (const found of [
      /test\/shop\.test\.js > price passed `toEqual` at test\/shop\.test\.js:3 only by the equality of Object \(src\/shop\.js, returned by price\)/,
      /test\/shop\.test\.js > order passed `toMatchObject` at test\/shop\.test\.js:4 only by the equality of Order \(src\/shop\.js, returned by order\)/,
      /test\/sum\.test\.js > sum passed `toEqual` at test\/sum\.test\.js:3 only by the equality of an equality tester \(not added by the tests\)/,
      /test\/count\.test\.js > count passed `toEqual` at test\/count\.test\.js:3 only by the equality of an equality tester \(not added by the tests\)/,
    ])
      expect(refused.text).toMatch(found);
  }, 300_000);

  it('approves a value class compared with toEqual, and an equality tester of the tests', async () => {
    const tests = linesOf(
      "import { expect, test } from 'vitest';",
      "import { Money, refund } from '../src/shop.js';",
      'expect.addEqualityTesters([',
      '  (a, b) => (a instanceof Money && typeof b === "number" ? a.cents === b : undefined),',
      ']);',
      "test('refund', () => expect(refund(250)).toEqual(new Money(-250)));",
      "test('refund in cents', () => expect(refund(5)).toEqual(-5));",
      "test('refund by shape', () => expect(refund(5)).toMatchObject({ cents: expect.any(Number) }));",
    );
    const task = await openTask({
      base: {
        ...VITEST_PROJECT,
        'src/shop.js': BASE_SHOP.replace('new Money(-cents)', 'new Money(cents)'),
        'test/refund.test.js': tests,
      },
      player: { 'src/shop.js': BASE_SHOP, 'src/shout.js': SHOUT, 'test/shout.test.js': SHOUT_TEST },
      criterion: CRITERION,
      evidence: EVIDENCE,
      beforePin: borrowNodeModules,
    });
    const approved = await task.approve();
    expect(approved.result.isError, approved.text).toBeFalsy();
  }, 300_000);
});
