import { describe, expect, it } from 'vitest';
import { withDocCommentsOf } from '../../src/analysis/rust-doc-comments.js';
import { linesOf } from '../helpers/layout-task.js';

const BASE = linesOf(
  '/// Percent.',
  '#[inline]',
  'pub fn percent(value: i64) -> i64 {',
  '    value.min(100)',
  '}',
  '',
  'pub struct Calc;',
  '',
  'impl Calc {',
  '    #[must_use]',
  '    pub fn new() -> Self {',
  '        Calc',
  '    }',
  '}',
);

const PLAYER = linesOf(
  '/// Percent.',
  '///',
  '/// ```',
  '/// assert_eq!(calc::percent(-5), 0);',
  '/// ```',
  '#[inline]',
  'pub fn percent(value: i64) -> i64 {',
  '    value.clamp(0, 100)',
  '}',
  '',
  '/** A new one.',
  ' * ```',
  ' * calc::fresh();',
  ' * ``` */',
  'pub fn fresh() {}',
  '',
  'pub struct Calc;',
  '',
  'impl Calc {',
  '    /// ```',
  '    /// let _ = calc::Calc::new();',
  '    /// ```',
  '    #[must_use]',
  '    pub fn new() -> Self {',
  '        Calc {}',
  '    }',
  '}',
);

describe("the Player's doc comments on the base's Rust items", () => {
  it('replaces and adds doc comments of the items both have, keeping the base code', () => {
    expect(withDocCommentsOf(BASE, PLAYER)).toBe(
      linesOf(
        '/// Percent.',
        '///',
        '/// ```',
        '/// assert_eq!(calc::percent(-5), 0);',
        '/// ```',
        '#[inline]',
        'pub fn percent(value: i64) -> i64 {',
        '    value.min(100)',
        '}',
        '',
        'pub struct Calc;',
        '',
        'impl Calc {',
        '    /// ```',
        '    /// let _ = calc::Calc::new();',
        '    /// ```',
        '    #[must_use]',
        '    pub fn new() -> Self {',
        '        Calc',
        '    }',
        '}',
      ),
    );
  });

  it('splices nothing where a block doc comment could end elsewhere once moved', () => {
    // rustc nests block comments; a doc ending on a line of code would take that code along.
    const nested = PLAYER.replace('/** A new one.', '/** A new /* nested */ one.');
    expect(withDocCommentsOf(BASE, nested)).toBeUndefined();
    const inline = BASE.replace('#[inline]\n', '/** ```\n * x\n * ``` */ #[inline]\n');
    expect(withDocCommentsOf(inline, PLAYER)).toBeUndefined();
  });

  it('splices nothing when no doc comment with a code block changed', () => {
    const player = BASE.replace('/// Percent.', '/// Percent, clamped.').replace('min', 'max');
    expect(withDocCommentsOf(BASE, player)).toBeUndefined();
    expect(withDocCommentsOf(BASE, BASE)).toBeUndefined();
  });
});
