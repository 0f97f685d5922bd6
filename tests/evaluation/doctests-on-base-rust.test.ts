import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTask, linesOf } from '../helpers/layout-task.js';
import { OFFLINE_CRATE, runs } from '../helpers/toolchains.js';

/**
 * rustdoc examples the Player writes in a library's doc comments, through the MCP client with real
 * cargo: the fail-to-pass run runs the Player's doc comments spliced into the base's src/lib.rs. The
 * Player's new constant above them moves their lines; the doctests that pass on the base code are
 * named as the Player's run names them (item and occurrence). A new example is a new code block:
 * one added to the base's block changes a base test (check_test_integrity's doctest_changed).
 */
const hasCargo = runs('cargo', ['--version']);

const EXAMPLE = (code: string) => ['/// ```', `/// ${code}`, '/// ```'];

const lib = (options: { above?: string[]; body: string; percent: string[]; double?: string[] }) =>
  linesOf(
    ...(options.above ?? []),
    ...EXAMPLE('assert_eq!(calc::percent(150), 100);'),
    ...options.percent,
    'pub fn percent(value: i64) -> i64 {',
    `    ${options.body}`,
    '}',
    '',
    ...(options.double ?? []),
    'pub fn double(a: i64) -> i64 {',
    '    a * 2',
    '}',
  );

const BASE = { ...OFFLINE_CRATE, 'src/lib.rs': lib({ body: 'value.min(100)', percent: [] }) };
const LOW = ['/// The lowest percent.', 'pub const LOW: i64 = 0;', ''];
const NEW_EXAMPLE = ['///', ...EXAMPLE('assert_eq!(calc::percent(-5), 0);')];
const FIXED = 'value.clamp(LOW, 100)';
// The Player's file: LOW's three lines above, then the base's example, then the new one.
const NEW_DOCTEST = 'src/lib.rs - percent (line 8)';

describe.skipIf(!hasCargo)(
  `rustdoc examples the Player adds (real cargo)${hasCargo ? '' : ' — skipped: no cargo'}`,
  () => {
    it('a new example that fails on the base is approved; the reverted fix is refused', async () => {
      await approvedThenRefused({
        base: BASE,
        honest: { 'src/lib.rs': lib({ above: LOW, body: FIXED, percent: NEW_EXAMPLE }) },
        tactic: {
          'src/lib.rs': lib({ above: LOW, body: 'value.min(100)', percent: NEW_EXAMPLE }),
        },
        tacticRun: 'failed',
        criterion: 'percent(value) clamps negative values to 0',
        evidence: [{ criterion: 'AC-001', test: NEW_DOCTEST }],
        taken: { taken_from_player: ['src/lib.rs'], regressions: [] },
        refusal: /src\/lib\.rs - percent \(line 8\)/,
      });
    }, 300_000);

    it('a new example that passes on the base code too is refused as such', async () => {
      // Before the splice: approved, for the base's file held no such doctest to run.
      const double = EXAMPLE('assert_eq!(calc::double(2), 4);');
      const task = await layoutTask({
        base: BASE,
        player: {
          'src/lib.rs': lib({ above: LOW, body: FIXED, percent: [], double }),
        },
        criterion: 'double(a) returns twice a',
        evidence: [{ criterion: 'AC-001', test: 'src/lib.rs - double (line 11)' }],
      });
      try {
        const refused = await task.approve();
        expect(refused.run.status, refused.run.summary).toBe('passed');
        expect(refused.result.isError).toBe(true);
        expect(refused.text).toMatch(
          /test src\/lib\.rs - double \(line 11\) also passes on the base code/,
        );
      } finally {
        await task.close();
      }
    }, 300_000);
  },
);
