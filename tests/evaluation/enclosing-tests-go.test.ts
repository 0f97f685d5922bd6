import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { runs } from '../helpers/toolchains.js';

/**
 * A citation inside a Go test, through the MCP client with the real go tool: a line of a `t.Run`
 * subtest verifies through that subtest, the `func TestX` line through the test and all its
 * subtests. The fix is approved on those citations alone (a product snippet beside them would
 * verify the criterion whatever the grammar found); the reverted fix is refused, naming the subtest
 * that fails.
 */
const hasGo = runs('go', ['version']);

const percent = (body: string[]) =>
  linesOf('package clamp', '', 'func Percent(v int) int {', ...body, '}');
const BUGGY = ['\tif v > 100 {', '\t\treturn 100', '\t}', '\treturn v'];

const NEW_TEST = linesOf(
  'package clamp',
  '',
  'import "testing"',
  '',
  'func TestPercentBounds(t *testing.T) {',
  '\tt.Run("above 100", func(t *testing.T) {',
  '\t\tif got := Percent(150); got != 100 {',
  '\t\t\tt.Fatalf("Percent(150) = %d", got)',
  '\t\t}',
  '\t})',
  '\tt.Run("below zero", func(t *testing.T) {',
  '\t\tif got := Percent(-5); got != 0 {',
  '\t\t\tt.Fatalf("Percent(-5) = %d", got)',
  '\t\t}',
  '\t})',
  '}',
);
const lineOf = (text: string) => NEW_TEST.split('\n').indexOf(text) + 1;

describe.skipIf(!hasGo)(
  `Citations inside Go tests (real go)${hasGo ? '' : ' — skipped: no go'}`,
  () => {
    it('the fix is approved through its subtest and test; the reverted fix is refused', async () => {
      await approvedThenRefused({
        base: {
          'go.mod': 'module example.com/clamp\n\ngo 1.19\n',
          'clamp.go': percent(BUGGY),
          'clamp_test.go': linesOf(
            'package clamp',
            '',
            'import "testing"',
            '',
            'func TestPercent(t *testing.T) {',
            '\tif Percent(50) != 50 {',
            '\t\tt.Fatal("Percent(50) != 50")',
            '\t}',
            '}',
          ),
        },
        honest: {
          'clamp.go': percent(['\tif v < 0 {', '\t\treturn 0', '\t}', ...BUGGY]),
          'bounds_test.go': NEW_TEST,
        },
        tactic: { 'clamp.go': percent(['\tif v < 0 {', '\t\treturn v', '\t}', ...BUGGY]) },
        tacticRun: 'failed',
        criterion: 'Percent(v) clamps negative values to 0',
        evidence: [
          {
            criterion: 'AC-001',
            file: 'bounds_test.go',
            line: lineOf('\t\tif got := Percent(-5); got != 0 {'),
          },
          {
            criterion: 'AC-001',
            file: 'bounds_test.go',
            line: lineOf('func TestPercentBounds(t *testing.T) {'),
          },
        ],
        taken: { taken_from_player: ['clamp.go'] },
        refusal: /TestPercentBounds\/below_zero/,
      });
    }, 240_000);
  },
);
