import { describe, expect, it } from 'vitest';
import { passedAsIn, positionMoved, stableTestIds } from '../../src/runner/stable-test-id.js';

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

describe('passedAsIn', () => {
  it('names the passed doctests of one run as the other run names the same ones', () => {
    const onBase = [
      { id: 'src/lib.rs - add (line 3)', status: 'failed' },
      { id: 'src/lib.rs - add (line 7)', status: 'passed' },
      { id: 'tests::adds', status: 'passed' },
    ];
    const trusted = [
      { id: 'src/lib.rs - add (line 5)' },
      { id: 'src/lib.rs - add (line 11)' },
      { id: 'tests::adds' },
    ];
    expect(passedAsIn(onBase, trusted)).toEqual(['src/lib.rs - add (line 11)', 'tests::adds']);
  });
});

describe('positionMoved', () => {
  it('flags a positional case only when its test has another number of cases', () => {
    const base = ['t.py::test_x[case0]', 't.py::test_x[case1]', 't.py::test_y[3-True]'];
    const moved = positionMoved(base, [...base, 't.py::test_x[case2]', 't.py::test_y[4-False]']);
    expect(moved('t.py::test_x[case1]')).toBe(true);
    expect(moved('t.py::test_y[3-True]')).toBe(false);
    expect(positionMoved(base, base)('t.py::test_x[case1]')).toBe(false);
  });
});
