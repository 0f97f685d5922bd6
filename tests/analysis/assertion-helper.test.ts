import { describe, expect, it } from 'vitest';
import {
  definesJavascriptAssertion,
  definesPythonAssertion,
} from '../../src/analysis/assertion-helper.js';

describe('assertion helpers, read from the text', () => {
  it('Python: an assert… function that asserts or raises AssertionError, not other functions', () => {
    expect(definesPythonAssertion('def assert_slug(a, b):\n    assert a == b\n')).toBe(true);
    const method =
      'class Checks:\n    def assertShouted(self, text):\n        if not text.endswith("!"):\n            raise AssertionError(text)\n';
    expect(definesPythonAssertion(method)).toBe(true);
    // Product code: invariants in other functions, or an assert… name that returns a value.
    expect(definesPythonAssertion('def normalize(a):\n    assert a\n    return a\n')).toBe(false);
    expect(definesPythonAssertion('def assert_valid(a):\n    return a > 0\n\nassert True\n')).toBe(
      false,
    );
  });

  it('JS: an assert…/expect… function in a module loading an assertion library', () => {
    const assertLib = ['node:assert/strict'];
    for (const helper of [
      'export const expectGreeting = (text, name) => assert.equal(text, name);',
      'export function assertShouted(text) { assert.match(text, /!$/); }',
      'exports.assertOk = async function (value) { assert.ok(value); };',
    ])
      expect(definesJavascriptAssertion(helper, assertLib), helper).toBe(true);
    for (const product of [
      "const assert = require('node:assert');\nexport const total = (xs) => xs.length;",
      'let expected = 3;\nconst assertions = [];',
    ])
      expect(definesJavascriptAssertion(product, assertLib), product).toBe(false);
    expect(definesJavascriptAssertion('export function assertShouted(text) {}', [])).toBe(false);
  });
});
