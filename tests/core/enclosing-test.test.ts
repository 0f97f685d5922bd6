import { describe, expect, it } from 'vitest';
import { enclosingTest } from '../../src/core/enclosing-test.js';

describe('enclosingTest', () => {
  it('finds the JS test a line belongs to', () => {
    const text = [
      "describe('greet', () => {",
      "  it('greets by name', () => {",
      "    expect(greet('Ada')).toBe('Hello, Ada!');",
      '  });',
      "  test.each([1])('counts %i', (n) => {",
      '    expect(n).toBe(1);',
      '  });',
      '});',
    ].join('\n');
    expect(enclosingTest('test/greet.test.js', text, 3)).toBe('greets by name');
    expect(enclosingTest('test/greet.test.js', text, 6)).toBe('counts %i');
    expect(enclosingTest('test/greet.test.js', text, 1)).toBeUndefined();
  });

  it('finds a Python method test, and nothing in a class body or a helper module', () => {
    const text =
      'class TestCart:\n    items = 2\n\n    def test_total(self):\n        with x:\n            assert 1\n';
    expect(enclosingTest('tests/test_cart.py', text, 6)).toBe('test_total');
    expect(enclosingTest('tests/test_cart.py', text, 2)).toBeUndefined();
    expect(enclosingTest('tests/helpers.py', text, 6)).toBeUndefined();
  });
});
