import { OFFLINE_CRATE, runs } from '../helpers/toolchains.js';
import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';

/**
 * Rust unit tests in their own files, through the MCP client with real cargo: a module declared
 * `#[cfg(test)] mod unit;` and a file that opens with `#![cfg(test)]` are the base's tests, while
 * the crate's code around them is the Player's. The honest change is approved; "break add, change
 * the test file's helper to match" is refused by the base's test file in the trusted run.
 */
const hasCargo = runs('cargo', ['--version']);

const ADD = 'pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n';
const SUB = '\npub fn sub(a: i64, b: i64) -> i64 {\n    a - b\n}\n';
// The expected value sits in a helper, not in the #[test] function: test items of a file taken
// from the Player are swapped for the base's anyway, its other items are not.
const unitTests = (header: string, expected: number) =>
  header +
  linesOf(
    'use super::*;',
    '',
    'fn expected_sum() -> i64 {',
    `    ${expected}`,
    '}',
    '',
    '#[test]',
    'fn adds() {',
    '    assert_eq!(add(2, 3), expected_sum());',
    '}',
  );

const RUST_LAYOUTS: {
  name: string;
  code: string;
  tests: string;
  /** The code file's declarations of its test module, and the test file's own header. */
  declaration: string;
  header: string;
  base: Record<string, string>;
}[] = [
  {
    name: '#[cfg(test)] mod unit; in src/lib.rs, tests in src/unit.rs',
    code: 'src/lib.rs',
    tests: 'src/unit.rs',
    declaration: '\n#[cfg(test)]\nmod unit;\n',
    header: '',
    base: {},
  },
  {
    name: '#[cfg(test)] mod checks; in src/math.rs, tests in src/math/checks.rs',
    code: 'src/math.rs',
    tests: 'src/math/checks.rs',
    declaration: '\n#[cfg(test)]\nmod checks;\n',
    header: '',
    base: { 'src/lib.rs': 'pub mod math;\n' },
  },
  {
    name: 'a module that marks itself test-only with #![cfg(test)]',
    code: 'src/lib.rs',
    tests: 'src/checks.rs',
    declaration: '\nmod checks;\n',
    header: '//! Unit tests of the crate.\n#![cfg(test)]\n\n',
    base: {},
  },
];

describe.skipIf(!hasCargo)(
  `Rust test modules in own files (real cargo)${hasCargo ? '' : ' — skipped: no cargo'}`,
  () => {
    it.each(RUST_LAYOUTS)(
      '$name: the honest change is approved, a weakened test file is refused',
      async (layout) => {
        const testsOf = (expected: number) => unitTests(layout.header, expected);
        const sub = layout.code === 'src/math.rs' ? 'math::sub' : 'sub';
        await approvedThenRefused({
          base: {
            ...OFFLINE_CRATE,
            ...layout.base,
            [layout.code]: ADD + layout.declaration,
            [layout.tests]: testsOf(5),
          },
          honest: { [layout.code]: ADD + SUB + layout.declaration },
          tactic: {
            [layout.code]: ADD.replace('a + b', 'a - b') + SUB + layout.declaration,
            [layout.tests]: testsOf(-1),
          },
          criterion: `${sub}(a, b) subtracts b from a`,
          evidence: [{ criterion: 'AC-001', file: layout.code, snippet: 'pub fn sub' }],
          taken: { taken_from_player: [layout.code] },
          refusal: /base test (?:\w+::)*adds passed at the base but failed in the trusted run/,
        });
      },
      240_000,
    );
  },
);

/**
 * A doc test is a base test living in product code: the trusted run takes the Player's copy of
 * src/lib.rs, doc comments included, so a base example the Player rewrote is caught statically
 * (`doctest_changed`), while a new item with an example of its own is honest work.
 */
describe.skipIf(!hasCargo)(
  `Rust doc tests (real cargo)${hasCargo ? '' : ' — skipped: no cargo'}`,
  () => {
    const documented = (body: string, example: string) =>
      linesOf(
        '/// ```',
        `/// ${example}`,
        '/// ```',
        `pub fn add(a: i64, b: i64) -> i64 {`,
        `    ${body}`,
        '}',
      );
    const SUB_DOCUMENTED = linesOf(
      '',
      '/// ```',
      '/// assert_eq!(calc::sub(5, 3), 2);',
      '/// ```',
      'pub fn sub(a: i64, b: i64) -> i64 {',
      '    a - b',
      '}',
    );
    it('a rewritten doc example is refused; a new documented function is approved', async () => {
      await approvedThenRefused({
        base: {
          ...OFFLINE_CRATE,
          'src/lib.rs': documented('a + b', 'assert_eq!(calc::add(2, 3), 5);'),
        },
        honest: {
          'src/lib.rs': documented('a + b', 'assert_eq!(calc::add(2, 3), 5);') + SUB_DOCUMENTED,
        },
        tactic: {
          'src/lib.rs': documented('a * b', 'assert_eq!(calc::add(2, 3), 6);') + SUB_DOCUMENTED,
        },
        criterion: 'sub(a, b) subtracts b from a',
        evidence: [{ criterion: 'AC-001', file: 'src/lib.rs', snippet: 'pub fn sub' }],
        taken: { taken_from_player: ['src/lib.rs'] },
        refusal: /doctest_changed in src\/lib\.rs:1 — a doctest example of `add`/,
      });
    }, 240_000);
  },
);
