import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { OFFLINE_CRATE, runs } from '../helpers/toolchains.js';

/**
 * A Rust crate whose unit tests live in src/lib.rs beside the code, with doctests, through the MCP
 * client with real cargo. The fix adds lines above a doctest (its rustdoc id moves) and extends the
 * inline test the base already had: a citation inside that test verifies through it, the
 * fail-to-pass run runs the Player's version of it on the base code (where it fails), and the moved
 * doctest is the same base test. The fix is approved on that citation alone (a product snippet
 * beside it would verify the criterion whatever the grammar found). The reverted fix is refused,
 * naming the failing test, and so is a fix that only holds when the crate is built for test.
 */
const hasCargo = runs('cargo', ['--version']);

const lib = (percentBody: string[], testBody: string[]) =>
  linesOf(
    '/// ```',
    '/// assert_eq!(calc::percent(150), 100);',
    '/// ```',
    'pub fn percent(value: i64) -> i64 {',
    ...percentBody,
    '}',
    '',
    '/// ```',
    '/// assert_eq!(calc::double(2), 4);',
    '/// ```',
    'pub fn double(a: i64) -> i64 {',
    '    a * 2',
    '}',
    '',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::*;',
    '',
    '    #[test]',
    '    fn clamps() {',
    ...testBody,
    '    }',
    '}',
  );

const BUGGY = ['    value.min(100)'];
const FIXED = ['    if value < 0 {', '        return 0;', '    }', '    value.min(100)'];
const OLD_TEST = ['        assert_eq!(percent(150), 100);'];
const NEW_TEST = [...OLD_TEST, '        assert_eq!(percent(-5), 0);'];
const CITED_LINE = lib(FIXED, NEW_TEST).split('\n').indexOf(NEW_TEST[1]!) + 1;

describe.skipIf(!hasCargo)(
  `Rust tests inside src/lib.rs (real cargo)${hasCargo ? '' : ' — skipped: no cargo'}`,
  () => {
    it('the fix is approved through the inline test it extended; the reverted fix is refused', async () => {
      // Before: "test tests::clamps also passes on the base code" (the base's own clamps() ran
      // there) and "base test src/lib.rs - double (line 8) ... did not run in the trusted run".
      await approvedThenRefused({
        base: { ...OFFLINE_CRATE, 'src/lib.rs': lib(BUGGY, OLD_TEST) },
        honest: { 'src/lib.rs': lib(FIXED, NEW_TEST) },
        tactic: { 'src/lib.rs': lib(BUGGY, NEW_TEST) },
        tacticRun: 'failed',
        criterion: 'percent(value) clamps negative values to 0',
        evidence: [{ criterion: 'AC-001', file: 'src/lib.rs', line: CITED_LINE }],
        taken: { taken_from_player: ['src/lib.rs'], regressions: [] },
        refusal: /tests::clamps/,
      });
    }, 240_000);

    it('a fix that holds only when built for test is refused, whatever the cfg spelling', async () => {
      // Read by the predicate's grammar: a text match for `cfg!(test)` approved this.
      const underTest = ['    if cfg!(not(not(test))) && value < 0 {', ...FIXED.slice(1)];
      await approvedThenRefused({
        base: { ...OFFLINE_CRATE, 'src/lib.rs': lib(BUGGY, OLD_TEST) },
        honest: { 'src/lib.rs': lib(FIXED, NEW_TEST) },
        tactic: { 'src/lib.rs': lib(underTest, NEW_TEST) },
        criterion: 'percent(value) clamps negative values to 0',
        evidence: [{ criterion: 'AC-001', file: 'src/lib.rs', snippet: 'return 0;' }],
        taken: { taken_from_player: ['src/lib.rs'], regressions: [] },
        refusal:
          /runner_detection in src\/lib\.rs:5 — product code reads whether it is built for test/,
      });
    }, 240_000);
  },
);
