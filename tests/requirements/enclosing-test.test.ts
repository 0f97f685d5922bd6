import { describe, expect, it } from 'vitest';
import { enclosingTest } from '../../src/requirements/enclosing-test.js';

const testAt = (file: string, text: string, line: number) => enclosingTest(file, text, line)?.test;

describe('enclosingTest', () => {
  it('finds the JS test a line belongs to', () => {
    const text = [
      "describe('greet', () => {",
      "  it('greets by name', () => {",
      "    expect(greet('Ada')).toBe('Hello, Ada!');",
      '  });',
      "  test.each([1])('counts %i', (n) => {",
      '    expect(n).toBe(1);',
      '  });',
      '});',
    ].join('\n');
    expect(testAt('test/greet.test.js', text, 3)).toBe('greets by name');
    expect(testAt('test/greet.test.js', text, 6)).toBe('counts %i');
    expect(testAt('test/greet.test.js', text, 1)).toBeUndefined();
  });

  it('finds a Python method test, and nothing in a class body or a helper module', () => {
    const text =
      'class TestCart:\n    items = 2\n\n    def test_total(self):\n        with x:\n            assert 1\n';
    expect(testAt('tests/test_cart.py', text, 6)).toBe('test_total');
    expect(testAt('tests/test_cart.py', text, 2)).toBeUndefined();
    expect(testAt('tests/helpers.py', text, 6)).toBeUndefined();
  });

  it('finds Go tests, subtests with literal names, examples and benchmarks; not helpers', () => {
    const text = [
      'package uuid', // 1
      '',
      'func helper(t *testing.T) {',
      '\tt.Helper()', // 4
      '}',
      '',
      'func TestVersion7(t *testing.T) {', // 7
      '\tt.Run("keeps order", func(t *testing.T) {',
      '\t\tcheck(t)', // 9
      '\t})',
      '\tfor _, tc := range cases {',
      '\t\tt.Run(tc.name, func(t *testing.T) {',
      '\t\t\tcheck(t)', // 13
      '\t\t})',
      '\t}',
      '\tdone(t)', // 16
      '}',
      '',
      'func BenchmarkNew(b *testing.B) {}', // 19
      'func ExampleNew() {', // 20
      '\t// Output: x',
      '}',
    ].join('\n');
    const file = 'uuid_test.go';
    expect(testAt(file, text, 4)).toBeUndefined();
    expect(testAt(file, text, 7)).toBe('TestVersion7');
    expect(testAt(file, text, 9)).toBe('TestVersion7/keeps_order');
    expect(testAt(file, text, 13)).toBe('TestVersion7');
    expect(testAt(file, text, 16)).toBe('TestVersion7');
    expect(testAt(file, text, 18)).toBeUndefined();
    expect(testAt(file, text, 19)).toBe('BenchmarkNew');
    expect(testAt(file, text, 21)).toBe('ExampleNew');
    expect(testAt('uuid.go', text, 9)).toBeUndefined();
  });

  it('finds a testify-style suite method under the test that runs its suite, with its s.Run subtests', () => {
    const text = [
      'package shout', // 1
      '',
      'type ShoutSuite struct{ suite.Suite }',
      '',
      'func (s *ShoutSuite) SetupTest() {}', // 5
      '',
      'func (s *ShoutSuite) TestLoud() {', // 7
      '\ts.Run("with spaces", func() {',
      '\t\ts.Equal("A!", Shout("a"))', // 9
      '\t})',
      '\ts.Equal("B!", Shout("b"))', // 11
      '}',
      '',
      'func (o OtherSuite) TestQuiet() {', // 14
      '\to.True(true)',
      '}',
      '',
      'func (s *LonelySuite) TestAlone() {', // 18
      '\ts.True(true)',
      '}',
      '',
      'func TestShout(t *testing.T) {', // 22
      '\tsuite.Run(t, new(ShoutSuite))',
      '\tother := &OtherSuite{Name: "x"}',
      '\tt.Run("other", func(t *testing.T) {',
      '\t\tsuite.Run(t, other)',
      '\t})',
      '}',
    ].join('\n');
    const file = 'shout_test.go';
    expect(testAt(file, text, 9)).toBe('TestShout/TestLoud/with_spaces');
    expect(testAt(file, text, 11)).toBe('TestShout/TestLoud');
    expect(testAt(file, text, 7)).toBe('TestShout/TestLoud');
    expect(testAt(file, text, 15)).toBe('TestShout/other/TestQuiet');
    // A helper method, and a suite no test of the package runs, are not tests.
    expect(testAt(file, text, 5)).toBeUndefined();
    expect(testAt(file, text, 19)).toBeUndefined();
    // The runner may sit in another test file of the package.
    const runner = 'func TestLonely(t *testing.T) {\n\tsuite.Run(t, &LonelySuite{})\n}\n';
    expect(enclosingTest(file, text, 19, [runner])?.test).toBe('TestLonely/TestAlone');
  });

  it('finds Java and Kotlin methods marked @Test, named Class#method as surefire names them', () => {
    const java = [
      'package com.acme;', // 1
      '',
      'class ClampTest {',
      '  private int helper() {',
      '    return 1;', // 5
      '  }',
      '',
      '  @Test',
      '  @DisplayName("clamps {negative} values")',
      '  void clampsNegatives() throws Exception {', // 10
      '    assertThrows(Oops.class, () -> {',
      '      Clamp.percent(-5); // }', // 12
      '    });',
      '    if (ready) {',
      '      assertEquals(0, Clamp.percent(-5));', // 15
      '    }',
      '    Runnable check = new Runnable() {',
      '      public void run() {',
      '        Clamp.percent(1);', // 19
      '      }',
      '    };',
      '  }',
      '}',
    ].join('\n');
    const file = 'src/test/java/com/acme/ClampTest.java';
    expect(testAt(file, java, 12)).toBe('ClampTest#clampsNegatives');
    expect(testAt(file, java, 15)).toBe('ClampTest#clampsNegatives');
    expect(testAt(file, java, 10)).toBe('ClampTest#clampsNegatives');
    // A method of an anonymous class inside the test is no test of its own.
    expect(testAt(file, java, 19)).toBeUndefined();
    expect(testAt(file, java, 5)).toBeUndefined();
    expect(testAt(file, java, 1)).toBeUndefined();
    const kotlin =
      'class ClampTest {\n    @Test fun `clamps negatives`() {\n        check(0)\n    }\n}\n';
    expect(testAt('src/test/kotlin/ClampTest.kt', kotlin, 3)).toBe('ClampTest#clamps negatives');
  });

  it('finds C# methods marked [Fact], [Test] or [TestMethod], named Class.Method as trx names them', () => {
    const text = [
      'namespace Acme.Tests', // 1
      '{',
      '    public class ClampTests',
      '    {',
      '        [Fact, Trait("area", "clamp")]', // 5
      '        public async Task ClampsNegatives()',
      '        {',
      '            Assert.Equal(0, await Clamp.PercentAsync(-5));', // 8
      '        }',
      '',
      '        private static int Helper()', // 11
      '        {',
      '            return 1;', // 13
      '        }',
      '    }',
      '}',
    ].join('\n');
    const file = 'tests/Acme.Tests/ClampTests.cs';
    expect(testAt(file, text, 8)).toBe('ClampTests.ClampsNegatives');
    expect(testAt(file, text, 13)).toBeUndefined();
  });

  it('finds Rust #[test] functions inline in a source, in modules, and in tests/*.rs', () => {
    const text = [
      'pub fn add(a: u8, b: u8) -> u8 { a + b }', // 1
      '',
      '#[cfg(test)]',
      'mod tests {',
      '    use super::*;', // 5
      '    fn helper() -> u8 { 1 }',
      '    #[test]',
      '    fn adds() {',
      '        assert_eq!(add(1, 1), 2);', // 9
      '    }',
      '    mod nested {',
      '        #[tokio::test]',
      '        async fn waits() { let s = "}"; }', // 13
      '    }',
      '}',
    ].join('\n');
    expect(testAt('src/lib.rs', text, 1)).toBeUndefined();
    expect(testAt('src/lib.rs', text, 6)).toBeUndefined();
    expect(testAt('src/lib.rs', text, 9)).toBe('tests::adds');
    expect(testAt('src/lib.rs', text, 7)).toBe('tests::adds');
    expect(testAt('src/lib.rs', text, 13)).toBe('tests::nested::waits');
    expect(testAt('src/text/parse.rs', text, 9)).toBe('text::parse::tests::adds');
    expect(testAt('src/text/mod.rs', text, 9)).toBe('text::tests::adds');
    expect(testAt('tests/adding.rs', text, 9)).toBe('tests::adds');
  });

  it('resolves a jest/vitest snapshot entry to the test that wrote it', () => {
    const text = [
      '// Vitest Snapshot v1',
      '',
      'exports[`greet > greets by name 1`] = `',
      '"Hello, Ada!"', // 4
      '`;',
      '',
      'exports[`greet > counts 2`] = `"1"`;', // 7
    ].join('\n');
    const file = 'test/__snapshots__/greet.test.js.snap';
    expect(enclosingTest(file, text, 4)).toEqual({
      test: 'greet > greets by name',
      file: 'test/greet.test.js',
    });
    expect(testAt(file, text, 6)).toBeUndefined();
    expect(testAt(file, text, 7)).toBe('greet > counts');
  });
});
