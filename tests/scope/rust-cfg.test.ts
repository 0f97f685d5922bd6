import { describe, expect, it } from 'vitest';
import { parseCfg, testDependence } from '../../src/scope/rust-cfg.js';
import { isTestAttribute } from '../../src/scope/rust-test-blocks.js';

describe('Rust cfg predicates by their grammar', () => {
  it.each([
    ['test', 'only'],
    ['all(test, unix)', 'only'],
    ['not(not(test))', 'only'],
    ['all(not(miri), any(test, all()))', 'none'], // an empty all() holds
    ['any(test, feature = "x")', 'reads'],
    ['not(test)', 'reads'],
    ['unix', 'none'],
    ['feature = "test"', 'none'],
    ['any(test, not(test))', 'none'],
  ])('%s: test decides it %s', (text, dependence) => {
    expect(testDependence(parseCfg(text)!)).toBe(dependence);
  });

  it('refuses what is not a predicate', () => {
    expect(parseCfg('not(test, unix)')).toBeUndefined();
    expect(parseCfg('all(test')).toBeUndefined();
    expect(parseCfg('test unix')).toBeUndefined();
  });

  it('an attribute is test-only when its predicate never holds without test', () => {
    expect(isTestAttribute('#[cfg(not(not(test)))]')).toBe(true);
    expect(isTestAttribute('#![cfg(all(test, feature = "slow"))]')).toBe(true);
    expect(isTestAttribute('#[tokio::test]')).toBe(true);
    // Built into the product whenever the feature is on: the Player's code, not the base's tests.
    expect(isTestAttribute('#[cfg(any(test, feature = "mock"))]')).toBe(false);
    expect(isTestAttribute('#[cfg(feature = "test-utils")]')).toBe(false);
    expect(isTestAttribute('#[derive(Debug)]')).toBe(false);
  });
});
