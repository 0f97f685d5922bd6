import { describe, expect, it } from 'vitest';
import {
  passedAsIn,
  positionMoved,
  sameTestsIn,
  stableTestIds,
} from '../../src/runner/stable-test-id.js';

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

  it("keeps the Player's id of a parametrized case, which a citation names", () => {
    const inserted = { function: 't.py::f', values: 'v=150' };
    const onBase = [{ id: 't.py::f[case2]', status: 'passed', case: inserted }];
    const trusted = [{ id: 't.py::f[case1]', case: inserted }];
    expect(passedAsIn(onBase, trusted)).toEqual(['t.py::f[case2]']);
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

describe('sameTestsIn', () => {
  const valued = (id: string, values: string) => ({
    id: `t.py::test_x[${id}]`,
    case: { function: 't.py::test_x', values },
  });
  const base = [valued('case0', 'v=1'), valued('case1', 'v=2'), { id: 't.py::test_y' }];

  it('finds a case by its values when both runs give every case of its test values', () => {
    const now = [valued('case0', 'v=1'), valued('case1', 'v=9'), valued('case2', 'v=2')];
    const same = sameTestsIn(now, base);
    expect(same.of(now[2]!)?.id).toBe('t.py::test_x[case1]');
    expect(same.of(now[1]!)).toBeUndefined();
    expect(same.byValues(now[1]!)).toBe(true);
    expect(sameTestsIn(base, [...now, { id: 't.py::test_y' }]).of(base[2]!)?.id).toBe(
      't.py::test_y',
    );
  });

  it('pairs by id a case whose values changed when the case of that id is unpaired too', () => {
    // The second case's value comes from a constant the change moved: same place, other values.
    const now = [valued('case0', 'v=1'), valued('case1', 'v=3'), valued('case2', 'v=5')];
    const same = sameTestsIn(base, now);
    expect(same.of(base[1]!)?.id).toBe('t.py::test_x[case1]');
    // An inserted case takes no id whose base case its values found elsewhere.
    const inserted = [valued('case0', 'v=1'), valued('case1', 'v=9'), valued('case2', 'v=2')];
    expect(sameTestsIn(inserted, base).of(inserted[1]!)).toBeUndefined();
  });

  it('pairs by id alone runs of the same test files', () => {
    const trusted = [valued('case0', 'v=2'), valued('case1', 'v=1')];
    expect(sameTestsIn(base, trusted, 'ids').of(base[0]!)?.id).toBe('t.py::test_x[case0]');
    expect(sameTestsIn(base, trusted).of(base[0]!)?.id).toBe('t.py::test_x[case1]');
  });

  it('falls back to ids when a case lacks values or two cases share them', () => {
    const unvalued = [valued('case0', 'v=1'), { id: 't.py::test_x[case1]' }];
    expect(sameTestsIn(unvalued, base).of(unvalued[1]!)?.id).toBe('t.py::test_x[case1]');
    expect(sameTestsIn(unvalued, base).byValues(unvalued[0]!)).toBe(false);
    const alike = [valued('case0', 'v=2'), valued('case1', 'v=2')];
    expect(sameTestsIn(alike, base).of(alike[0]!)?.id).toBe('t.py::test_x[case0]');
    expect(sameTestsIn(base, [{ id: 't.py::test_x[case0]' }]).of(base[1]!)).toBeUndefined();
  });
});
