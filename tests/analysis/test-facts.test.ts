import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  collectIntegrityFacts,
  extractTestFacts,
  type SourceFile,
  type TestFactsOptions,
} from '../../src/analysis/test-facts.js';
import { DEFAULT_SANDBOX_POLICY } from '../../src/config/sandbox-policy.js';
import type { FileVersions } from '../../src/integrity/integrity.js';
import { serverPython } from '../../src/runner/pyenv.js';

/** As a repository without a sandbox setting gets them: the default policy. */
const extract = (files: SourceFile[], options: Partial<TestFactsOptions> = {}) =>
  extractTestFacts(files, { sandbox: DEFAULT_SANDBOX_POLICY, ...options });
const collect = (files: FileVersions[]) =>
  collectIntegrityFacts(files, { sandbox: DEFAULT_SANDBOX_POLICY });

const code = (...lines: string[]) => `${lines.join('\n')}\n`;

const PYTHON_SUITE = code(
  'import sys',
  'import unittest',
  'from unittest import mock',
  'import pytest',
  '',
  'pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="posix only")',
  "sys.modules.update({'app.mailer': mock.Mock(), 'smtplib': mock.Mock()})",
  '',
  'def helper():',
  '    assert True',
  '',
  'def test_sends():',
  '    def test_nested_helper():',
  '        pass',
  '    assert send() == 1',
  '    sender = mock.Mock()',
  '    sender.assert_called_once()',
  '    with pytest.raises(ValueError):',
  '        send(None)',
  '',
  '@unittest.skip("broken")',
  'class MailerTest(unittest.TestCase):',
  '    def setUp(self):',
  '        self.skipTest("no server")',
  '',
  '    @pytest.mark.xfail',
  '    def test_retries(self):',
  '        self.assertEqual(retry(), 2)',
  '',
  'def test_patched():',
  "    with mock.patch.dict(sys.modules, {'app.queue': None}):",
  '        pytest.importorskip("celery")',
  '    sys.modules.setdefault(name, None)',
);

describe('Python test facts', () => {
  it('reads tests, assertions, skip markers and module stubs with python3 ast', async () => {
    const facts = (await extract([{ path: 'tests/test_mailer.py', text: PYTHON_SUITE }])).get(
      'tests/test_mailer.py',
    );
    expect(facts?.parser).toBe('python_ast');
    expect(facts?.tests).toMatchObject([
      { name: 'test_sends', line: 12, assertions: 3 },
      { name: 'MailerTest.test_retries', line: 27, assertions: 1 },
      { name: 'test_patched', line: 30, assertions: 0 },
    ]);
    expect(facts?.skips).toEqual([
      { line: 6, marker: 'pytest.mark.skipif' },
      { line: 21, marker: 'unittest.skip', test: 'MailerTest' },
      { line: 24, marker: 'skipTest', test: 'MailerTest' },
      { line: 26, marker: 'pytest.mark.xfail', test: 'MailerTest.test_retries' },
      { line: 32, marker: 'pytest.importorskip', test: 'test_patched' },
    ]);
    expect(facts?.module_stubs).toEqual([
      { line: 7, module: 'app.mailer', via: 'sys.modules.update' },
      { line: 7, module: 'smtplib', via: 'sys.modules.update' },
      { line: 31, module: 'app.queue', via: 'mock.patch.dict(sys.modules)', test: 'test_patched' },
      { line: 33, module: '<dynamic>', via: 'sys.modules.setdefault', test: 'test_patched' },
    ]);
  });

  it('finds the same tests and markers by line scan when python3 is missing, and says why', async () => {
    const scanned = (
      await extract([{ path: 'tests/test_mailer.py', text: PYTHON_SUITE }], {
        python: 'no-such-python3',
      })
    ).get('tests/test_mailer.py');
    expect(scanned?.parser).toBe('line_scan');
    expect(scanned?.fallback_reason).toBe('no-such-python3 was not found');
    expect(scanned?.tests.map((t) => t.name)).toEqual([
      'test_sends',
      'MailerTest.test_retries',
      'test_patched',
    ]);
    expect(scanned?.skips.map((s) => s.marker)).toEqual([
      'pytest.mark.skipif',
      'unittest.skip',
      'skipTest',
      'pytest.mark.xfail',
      'pytest.importorskip',
    ]);
    expect(scanned?.module_stubs.map((s) => [s.line, s.module])).toEqual([
      [7, 'app.mailer'],
      [7, 'smtplib'],
      [31, 'app.queue'],
    ]);
  });

  it('parses a batch in one go, falling back only for the file that does not parse', async () => {
    const facts = await extract([
      { path: 'tests/test_ok.py', text: code('def test_ok():', '    assert 1') },
      { path: 'tests/test_broken.py', text: code('def test_broken(:', '    pytest.skip("x")') },
      { path: 'README.md', text: '# not code' },
    ]);
    expect([...facts.keys()]).toEqual(['tests/test_ok.py', 'tests/test_broken.py']);
    expect(facts.get('tests/test_ok.py')?.parser).toBe('python_ast');
    expect(facts.get('tests/test_broken.py')).toMatchObject({
      parser: 'line_scan',
      fallback_reason: 'the file does not parse as Python (SyntaxError: invalid syntax (line 1))',
      tests: [{ name: 'test_broken', line: 1, assertions: 0 }],
      skips: [{ line: 2, marker: 'pytest.skip', test: 'test_broken' }],
    });
  });

  it("runs no .pth file of the interpreter's site-packages (a worktree virtualenv's)", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), 'coachgate-facts-venv-'));
    try {
      execFileSync(await serverPython(), ['-m', 'venv', '--without-pip', path.join(home, 'venv')]);
      const python = path.join(home, 'venv', 'bin', 'python');
      const sitePackages = execFileSync(python, [
        '-c',
        'import site; print(site.getsitepackages()[0])',
      ])
        .toString()
        .trim();
      // Run at start-up, it would spoil the helper's answer and so every fact.
      writeFileSync(path.join(sitePackages, 'planted.pth'), 'import sys; print("planted")\n');
      expect(execFileSync(python, ['-I', '-c', 'pass']).toString()).toContain('planted');
      // The venv lives under the temp directory, which the sandbox replaces with its own.
      const facts = await extract(
        [{ path: 'tests/test_ok.py', text: code('def test_ok():', '    assert 1') }],
        {
          python,
          sandbox: { mode: 'off', network: 'none' },
        },
      );
      expect(facts.get('tests/test_ok.py')?.parser).toBe('python_ast');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('JS/TS test facts', () => {
  it('names tests by their suites, counts assertions per test and not in nested subtests', async () => {
    const text = code(
      "import test, { describe, it } from 'node:test';",
      "describe('cart', () => {",
      "  describe('total', () => {",
      "    it('sums', () => { expect(sum(1, 2)).toBe(3); expect.soft(sum()).toBe(0); });",
      "    it.each([[1, 1]])('keeps %i', (a, b) => { assert.equal(a, b); });",
      '  });',
      '});',
      "test('parent', async (t) => {",
      '  t.assert.ok(true);',
      "  await t.test('child', () => { assert(true); assert.ok(true); });",
      '});',
    );
    const facts = (await extract([{ path: 'test/cart.test.mjs', text }])).get('test/cart.test.mjs');
    expect(facts?.parser).toBe('typescript');
    expect(facts?.tests).toMatchObject([
      { name: 'cart > total > sums', line: 4, assertions: 2 },
      { name: 'cart > total > keeps %i', line: 5, assertions: 1 },
      { name: 'parent', line: 8, assertions: 1 },
      { name: 'child', line: 10, assertions: 2 },
    ]);
  });

  it('finds skips, focuses and module mocks in TSX, including mocha this.skip() and dynamic import paths', async () => {
    const text = code(
      "vi.mock(import('./api'), () => ({}));",
      "jest.unstable_mockModule('node:fs', () => ({}));",
      "describe('Cart', function () {",
      "  it('renders', function () {",
      '    if (!process.env.DISPLAY) this.skip();',
      '    expect(render(<Cart items={[]} />)).toBeTruthy();',
      '  });',
      "  it.only('totals', () => { t.skip(); });",
      "  test.skip.each([1])('n %i', () => {});",
      '});',
    );
    const facts = (await extract([{ path: 'src/Cart.spec.tsx', text }])).get('src/Cart.spec.tsx');
    expect(facts?.module_stubs).toEqual([
      { line: 1, module: './api', via: 'vi.mock' },
      { line: 2, module: 'node:fs', via: 'jest.unstable_mockModule' },
    ]);
    // `t.skip()` is no skip here: `t` is not the test's context parameter.
    expect(facts?.skips).toEqual([
      { line: 5, marker: 'this.skip', test: 'Cart > renders' },
      { line: 9, marker: 'test.skip', test: 'Cart > n %i' },
    ]);
    expect(facts?.focuses).toEqual([{ line: 8, marker: 'it.only', test: 'Cart > totals' }]);
    expect(facts?.tests.map((t) => [t.name, t.assertions])).toEqual([
      ['Cart > renders', 1],
      ['Cart > totals', 0],
      ['Cart > n %i', 0],
    ]);
  });
});

describe('Go and Rust test facts (line scan)', () => {
  it('reads Go test functions, their t.Error/t.Fatal/assert calls and t.Skip', async () => {
    const text = code(
      'package cart',
      '',
      'func helper(t *testing.T) { t.Skip("not a test") }',
      '',
      'func TestTotal(t *testing.T) {',
      '\tif testing.Short() {',
      '\t\tt.Skipf("short: %v", true) // "}" in a comment',
      '\t}',
      '\tif Total() != 0 {',
      '\t\tt.Errorf("got %d", Total())',
      '\t}',
      '\trequire.Equal(t, 1, One())',
      '}',
      '',
      'func TestEmpty(t *testing.T) {}',
    );
    const facts = (await extract([{ path: 'cart/cart_test.go', text }])).get('cart/cart_test.go');
    expect(facts?.tests).toMatchObject([
      { name: 'TestTotal', line: 5, assertions: 2 },
      { name: 'TestEmpty', line: 15, assertions: 0 },
    ]);
    expect(facts?.skips).toEqual([
      { line: 3, marker: 't.Skip' },
      { line: 7, marker: 't.Skipf', test: 'TestTotal' },
    ]);
  });

  it('reads Rust #[test] functions with their attributes, assert macros and #[ignore]', async () => {
    const text = code(
      'fn total(x: &[u32]) -> u32 { x.iter().sum() }',
      '',
      '#[cfg(test)]',
      'mod tests {',
      '    #[ignore = "slow"]',
      '    #[test]',
      '    fn sums() {',
      '        assert_eq!(super::total(&[1, 2]), 3);',
      '        debug_assert!(true);',
      '    }',
      '',
      '    #[tokio::test]',
      '    #[should_panic]',
      '    async fn panics() {',
      '        panic!("boom");',
      '    }',
      '}',
    );
    const facts = (await extract([{ path: 'src/lib.rs', text }])).get('src/lib.rs');
    expect(facts?.tests).toMatchObject([
      { name: 'sums', line: 7, assertions: 2 },
      { name: 'panics', line: 14, assertions: 1 },
    ]);
    expect(facts?.skips).toEqual([{ line: 5, marker: '#[ignore]', test: 'sums' }]);
  });
});

describe('collectIntegrityFacts', () => {
  it('scans both sides by line when only one side parses, so the comparison is like for like', async () => {
    const base = code('def test_a():', '    assert 1');
    const now = code('def test_a(:', '    assert 1');
    const { facts } = await collect([{ path: 'tests/test_a.py', base, now }]);
    const pair = facts.get('tests/test_a.py');
    expect([pair?.base?.parser, pair?.now?.parser]).toEqual(['line_scan', 'line_scan']);
    expect(pair?.base?.fallback_reason).toBe(
      'the file does not parse as Python (SyntaxError: invalid syntax (line 1)), in the current version',
    );
  });

  it('keeps test facts for test sources and settings for test config files only', async () => {
    const { facts, config_settings } = await collect([
      { path: 'tests/conftest.py', base: 'import sys\n', now: "collect_ignore = ['x']\n" },
      { path: 'tests/test_a.py', now: 'def test_a():\n    pass\n' },
      { path: 'src/app.py', base: 'x = 1\n', now: 'x = 2\n' },
      { path: 'package.json', base: '{"scripts":{"test":"vitest"}}' },
    ]);
    expect([...facts.keys()]).toEqual(['tests/conftest.py', 'tests/test_a.py']);
    expect(facts.get('tests/test_a.py')?.base).toBeUndefined();
    expect(Object.fromEntries(config_settings)).toEqual({
      'tests/conftest.py': { base: {}, now: { collect_ignore: "collect_ignore = ['x']" } },
      'package.json': { base: { 'scripts.test': '"vitest"' } },
    });
  });
});
