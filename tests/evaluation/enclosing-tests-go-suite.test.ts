import { describe, it } from 'vitest';
import { approvedThenRefused, linesOf } from '../helpers/layout-task.js';
import { runs } from '../helpers/toolchains.js';

/**
 * A citation inside a testify-style suite method, through the MCP client with the real go tool:
 * `go test` names a suite's `func (s *ShoutSuite) TestEmpty()` as a subtest of the test that runs
 * the suite (`TestShoutSuite/TestEmpty`), its `s.Run("no text", …)` one level below. testify is not
 * in the offline module cache: a stand-in module with testify's protocol (each `Test*` method run
 * as a subtest, by reflection) is put in its place by a `replace` directive; the suite's runner
 * sits in another file of the package than the cited method. The fix is approved
 * on the citations inside the suite method alone (a line of its subtest, its `func` line); the
 * reverted fix is refused, naming the failing suite test.
 */
const hasGo = runs('go', ['version']);

const STAND_IN = linesOf(
  "// Package suite stands in for testify's: each method whose name starts with Test is a subtest.",
  'package suite',
  '',
  'import (',
  '\t"reflect"',
  '\t"strings"',
  '\t"testing"',
  ')',
  '',
  'type Suite struct{ t *testing.T }',
  '',
  'func (s *Suite) T() *testing.T { return s.t }',
  '',
  'func (s *Suite) SetT(t *testing.T) { s.t = t }',
  '',
  'func (s *Suite) Run(name string, f func()) bool {',
  '\tparent := s.t',
  '\tdefer s.SetT(parent)',
  '\treturn parent.Run(name, func(t *testing.T) {',
  '\t\ts.SetT(t)',
  '\t\tf()',
  '\t})',
  '}',
  '',
  'func (s *Suite) Equal(want, got interface{}) {',
  '\ts.t.Helper()',
  '\tif !reflect.DeepEqual(want, got) {',
  '\t\ts.t.Errorf("want %#v, got %#v", want, got)',
  '\t}',
  '}',
  '',
  'type TestingSuite interface {',
  '\tT() *testing.T',
  '\tSetT(*testing.T)',
  '}',
  '',
  'func Run(t *testing.T, suite TestingSuite) {',
  '\tvalue := reflect.ValueOf(suite)',
  '\tfor index := 0; index < value.NumMethod(); index++ {',
  '\t\tmethod := value.Type().Method(index)',
  '\t\tif !strings.HasPrefix(method.Name, "Test") {',
  '\t\t\tcontinue',
  '\t\t}',
  '\t\tt.Run(method.Name, func(t *testing.T) {',
  '\t\t\tsuite.SetT(t)',
  '\t\t\tmethod.Func.Call([]reflect.Value{value})',
  '\t\t})',
  '\t}',
  '}',
);

const shout = (empty: string) =>
  linesOf(
    'package shout',
    '',
    'import "strings"',
    '',
    'func Shout(text string) string {',
    '\tif text == "" {',
    `\t\treturn "${empty}"`,
    '\t}',
    '\treturn strings.ToUpper(text) + "!"',
    '}',
  );

const SUITE_TEST = linesOf(
  'package shout',
  '',
  'import "github.com/stretchr/testify/suite"',
  '',
  'type ShoutSuite struct{ suite.Suite }',
  '',
  'func (s *ShoutSuite) TestEmpty() {',
  '\ts.Run("no text", func() {',
  '\t\ts.Equal("!", Shout(""))',
  '\t})',
  '}',
);
/** The suite's runner, in another file of the package than its methods. */
const RUNNER = linesOf(
  'package shout',
  '',
  'import (',
  '\t"testing"',
  '',
  '\t"github.com/stretchr/testify/suite"',
  ')',
  '',
  'func TestShoutSuite(t *testing.T) {',
  '\tsuite.Run(t, new(ShoutSuite))',
  '}',
);
const lineOf = (text: string) => SUITE_TEST.split('\n').indexOf(text) + 1;

describe.skipIf(!hasGo)(
  `Citations inside Go suite methods (real go)${hasGo ? '' : ' — skipped: no go'}`,
  () => {
    it('the fix is approved through the suite method; the reverted fix is refused', async () => {
      await approvedThenRefused({
        base: {
          'go.mod': linesOf(
            'module example.com/shout',
            '',
            'go 1.19',
            '',
            'require github.com/stretchr/testify v1.8.4',
            '',
            'replace github.com/stretchr/testify => ./third_party/testify',
          ),
          'third_party/testify/go.mod': 'module github.com/stretchr/testify\n\ngo 1.19\n',
          'third_party/testify/suite/suite.go': STAND_IN,
          'shout.go': shout(''),
          'shout_test.go': linesOf(
            'package shout',
            '',
            'import "testing"',
            '',
            'func TestShout(t *testing.T) {',
            '\tif Shout("a") != "A!" {',
            '\t\tt.Fatal(Shout("a"))',
            '\t}',
            '}',
          ),
        },
        honest: { 'shout.go': shout('!'), 'empty_test.go': SUITE_TEST, 'suite_test.go': RUNNER },
        tactic: { 'shout.go': shout('') },
        tacticRun: 'failed',
        criterion: 'Shout("") returns "!"',
        evidence: [
          {
            criterion: 'AC-001',
            file: 'empty_test.go',
            line: lineOf('\t\ts.Equal("!", Shout(""))'),
          },
          {
            criterion: 'AC-001',
            file: 'empty_test.go',
            line: lineOf('func (s *ShoutSuite) TestEmpty() {'),
          },
        ],
        taken: { taken_from_player: ['shout.go'] },
        refusal: /TestShoutSuite\/TestEmpty/,
      });
    }, 240_000);
  },
);
