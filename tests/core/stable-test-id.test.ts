import { describe, expect, it } from 'vitest';
import { stableTestIds } from '../../src/core/stable-test-id.js';

describe('stableTestIds', () => {
  it('names a rustdoc doctest by its item and occurrence, whatever line a change moved it to', () => {
    const base = stableTestIds([
      'src/lib.rs - add (line 12)',
      'src/lib.rs - add (line 4)',
      'src/lib.rs - Calc::sub (line 30)',
      'tests::adds',
    ]);
    const moved = stableTestIds([
      'src/lib.rs - add (line 9)',
      'src/lib.rs - add (line 17)',
      'src/lib.rs - Calc::sub (line 41)',
      'tests::adds',
    ]);
    expect([...base.values()].sort()).toEqual([...moved.values()].sort());
    expect(base.get('src/lib.rs - add (line 4)')).toBe('src/lib.rs - add (#1)');
    expect(moved.get('src/lib.rs - add (line 17)')).toBe('src/lib.rs - add (#2)');
    expect(base.get('tests::adds')).toBe('tests::adds');
  });
});
