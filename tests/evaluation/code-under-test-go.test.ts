import { runs } from '../helpers/toolchains.js';
import { GO_CHECK } from '../helpers/go-check.js';
import { describe, expect, it } from 'vitest';
import { approvedThenRefused, layoutTask, linesOf } from '../helpers/layout-task.js';

/**
 * Go layouts through the MCP client with the real go tool: the module's packages are the Player's
 * code, `_test.go` files, `testdata/` and a helper package that imports `testing` are the base's.
 * On each layout the honest change is approved and "break the code, weaken what the base test
 * reads" is refused by the base's test in the trusted run.
 */
const hasGo = runs('go', ['version']);

const GO_MOD = 'module example.com/shout\n\ngo 1.19\n';
const shout = (pkg: string, body = 'strings.ToUpper(s) + "!"') =>
  linesOf(
    `package ${pkg}`,
    '',
    'import "strings"',
    '',
    'func Shout(s string) string {',
    `\treturn ${body}`,
    '}',
  );
const WHISPER = linesOf('', 'func Whisper(s string) string {', '\treturn strings.ToLower(s)', '}');

interface GoLayout {
  name: string;
  code: string;
  pkg: string;
  base: Record<string, string>;
  /** The base's test file and what the tactic turns it into. */
  weakened: Record<string, string>;
  refusal: RegExp;
}

const testOf = (pkg: string, importLine: string, call: string, expected: string) =>
  linesOf(
    `package ${pkg}`,
    '',
    'import (',
    '\t"testing"',
    importLine,
    ')',
    '',
    'func TestShout(t *testing.T) {',
    `\tif got := ${call}("hi"); got != "${expected}" {`,
    `\t\tt.Fatalf("Shout(hi) = %q, want ${expected}", got)`,
    '\t}',
    '}',
  );

const BASE_FAILED = /base test \S*TestShout passed at the base but failed in the trusted run/;

const LAYOUTS: GoLayout[] = [
  {
    name: 'a nested package with a main that uses it, tests in an external _test package',
    code: 'text/shout.go',
    pkg: 'text',
    base: {
      'cmd/shout/main.go': linesOf(
        'package main',
        '',
        'import (',
        '\t"fmt"',
        '\t"os"',
        '',
        '\t"example.com/shout/text"',
        ')',
        '',
        'func main() { fmt.Println(text.Shout(os.Args[1])) }',
      ),
      'text/shout_test.go': testOf('text_test', '\t"example.com/shout/text"', 'text.Shout', 'HI!'),
    },
    weakened: {
      'text/shout_test.go': testOf('text_test', '\t"example.com/shout/text"', 'text.Shout', 'hi!'),
    },
    refusal: BASE_FAILED,
  },
  {
    name: 'an internal/ package',
    code: 'internal/loud/shout.go',
    pkg: 'loud',
    base: { 'internal/loud/shout_test.go': testOf('loud', '', 'Shout', 'HI!') },
    weakened: { 'internal/loud/shout_test.go': testOf('loud', '', 'Shout', 'hi!') },
    refusal: BASE_FAILED,
  },
  {
    name: 'a package at the module root, its expected values in testdata/',
    code: 'shout.go',
    pkg: 'shout',
    base: {
      'testdata/want.txt': 'HI!\n',
      'shout_test.go': linesOf(
        'package shout',
        '',
        'import (',
        '\t"os"',
        '\t"strings"',
        '\t"testing"',
        ')',
        '',
        'func TestShout(t *testing.T) {',
        '\twant, err := os.ReadFile("testdata/want.txt")',
        '\tif err != nil {',
        '\t\tt.Fatal(err)',
        '\t}',
        '\tif got := Shout("hi"); got != strings.TrimSpace(string(want)) {',
        '\t\tt.Fatalf("Shout(hi) = %q, want %q", got, want)',
        '\t}',
        '}',
      ),
    },
    weakened: { 'testdata/want.txt': 'hi!\n' },
    refusal: BASE_FAILED,
  },
  {
    name: 'a helper package of the tests that imports testing',
    code: 'shout.go',
    pkg: 'shout',
    base: {
      'internal/check/check.go': GO_CHECK,
      'shout_test.go': linesOf(
        'package shout',
        '',
        'import (',
        '\t"testing"',
        '',
        '\t"example.com/shout/internal/check"',
        ')',
        '',
        'func TestShout(t *testing.T) { check.Equal(t, Shout("hi"), "HI!") }',
      ),
    },
    weakened: {
      'internal/check/check.go': linesOf(
        'package check',
        '',
        'import "testing"',
        '',
        'func Equal(t *testing.T, got, want string) {}',
      ),
    },
    refusal: BASE_FAILED,
  },
];

describe.skipIf(!hasGo)(`Go layouts (real go)${hasGo ? '' : ' — skipped: no go'}`, () => {
  it.each(LAYOUTS)(
    '$name: the honest change is approved, the weakened test is refused',
    async (layout) => {
      await approvedThenRefused({
        base: { 'go.mod': GO_MOD, ...layout.base, [layout.code]: shout(layout.pkg) },
        honest: { [layout.code]: shout(layout.pkg) + WHISPER },
        tactic: {
          [layout.code]: shout(layout.pkg, 'strings.ToLower(s) + "!"') + WHISPER,
          ...layout.weakened,
        },
        criterion: 'Whisper(s) returns s in lower case',
        evidence: [{ criterion: 'AC-001', file: layout.code, snippet: 'func Whisper' }],
        taken: { taken_from_player: [layout.code] },
        refusal: layout.refusal,
      });
    },
    240_000,
  );
});

const whisperTest = (body: string, imports: string[]) =>
  linesOf(
    'package shout',
    '',
    'import (',
    ...imports,
    ')',
    '',
    'func TestWhisper(t *testing.T) {',
    body,
    '}',
  );

describe.skipIf(!hasGo)(
  `Go: the Player's new tests (real go)${hasGo ? '' : ' — skipped: no go'}`,
  () => {
    const base = {
      'go.mod': GO_MOD,
      'shout.go': shout('shout'),
      'internal/check/check.go': GO_CHECK,
      'shout_test.go': linesOf(
        'package shout',
        '',
        'import (',
        '\t"testing"',
        '',
        '\t"example.com/shout/internal/check"',
        ')',
        '',
        'func TestShout(t *testing.T) { check.Equal(t, Shout("hi"), "HI!") }',
      ),
    };
    const criterion = 'Whisper(s) returns s in lower case';
    const evidence = [{ criterion: 'AC-001', test: 'TestWhisper' }];

    it('a new test that reads its own new file in testdata/ is approved', async () => {
      const task = await layoutTask({
        base,
        player: {
          'shout.go': shout('shout') + WHISPER,
          'testdata/whisper.txt': 'hi',
          'whisper_test.go': whisperTest(
            '\twant, _ := os.ReadFile("testdata/whisper.txt")\n\tcheck.Equal(t, Whisper("HI"), string(want))',
            ['\t"os"', '\t"testing"', '', '\t"example.com/shout/internal/check"'],
          ),
        },
        criterion,
        evidence,
      });
      try {
        const approved = await task.approve();
        expect(approved.result.isError, approved.text).toBeFalsy();
      } finally {
        await task.close();
      }
    }, 240_000);

    it('a new test that passes only with the helper package weakened is refused, naming it', async () => {
      const task = await layoutTask({
        base,
        player: {
          'shout.go': shout('shout') + WHISPER.replace('ToLower', 'ToUpper'),
          'internal/check/check.go': GO_CHECK.replace('got != want', 'false'),
          'whisper_test.go': whisperTest('\tcheck.Equal(t, Whisper("HI"), "hi")', [
            '\t"testing"',
            '',
            '\t"example.com/shout/internal/check"',
          ]),
        },
        criterion,
        evidence,
      });
      try {
        const refused = await task.approve();
        expect(refused.run.status, refused.run.summary).toBe('passed');
        expect(refused.result.isError).toBe(true);
        expect(refused.text).toMatch(
          /new test \S*TestWhisper passed in the worktree but failed .*: responsible is what the trusted run left out, internal\/check\/check\.go\./,
        );
      } finally {
        await task.close();
      }
    }, 240_000);
  },
);

describe.skipIf(!hasGo)(
  `Go: a package the base tests no longer build${hasGo ? '' : ' — skipped: no go'}`,
  () => {
    it('is refused once, with the compiler’s message, not once per test', async () => {
      const twoTests = linesOf(
        'package shout',
        '',
        'import "testing"',
        '',
        'func TestShout(t *testing.T) { _ = Shout("hi") }',
        '',
        'func TestWhisper(t *testing.T) { _ = Whisper("HI") }',
      );
      const task = await layoutTask({
        base: { 'go.mod': GO_MOD, 'shout.go': shout('shout') + WHISPER, 'shout_test.go': twoTests },
        player: {
          // Whisper is gone, and so is its test: the base's shout_test.go no longer compiles.
          'shout.go': shout('shout'),
          'shout_test.go': linesOf(
            'package shout',
            '',
            'import "testing"',
            '',
            'func TestShout(t *testing.T) { _ = Shout("hi") }',
          ),
        },
        criterion: 'Whisper is removed',
        evidence: [{ criterion: 'AC-001', file: 'shout.go', snippet: 'func Shout' }],
      });
      try {
        const refused = await task.approve();
        expect(refused.run.status, refused.run.summary).toBe('passed');
        expect(refused.result.isError).toBe(true);
        expect(refused.text).toMatch(
          /2 base tests example\.com\/shout\/TestShout, example\.com\/shout\/TestWhisper passed at the base but did not run in the trusted run \(base tests and config on your code\): example\.com\/shout did not load: \.\/shout_test\.go:\d+:\d+: undefined: Whisper\./,
        );
        expect(refused.text).not.toMatch(/something in the code stops it/);
      } finally {
        await task.close();
      }
    }, 240_000);
  },
);
