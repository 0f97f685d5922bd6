import { execa } from 'execa';
import { DEFAULT_SANDBOX_POLICY } from '../../src/config/sandbox-policy.js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collectIntegrityFacts, type TestFactsOptions } from '../../src/analysis/test-facts.js';
import {
  explainWithTrustedRun,
  findIntegrityIssues,
  type FileVersions,
  type IntegrityFinding,
  type IntegrityInput,
  type TrustedRunEvidence,
} from '../../src/integrity/integrity.js';
import { successorOutcome } from '../../src/integrity/test-successors.js';
import { isTestConfigFile, isTestFile } from '../../src/scope/test-paths.js';

const code = (...lines: string[]) => `${lines.join('\n')}\n`;

/** Base and current contents through the real extraction (python3's ast, the TypeScript parser) and the rules. */
async function check(
  files: FileVersions[],
  extra: Partial<IntegrityInput> = {},
  options: Partial<TestFactsOptions> = {},
): Promise<IntegrityFinding[]> {
  const facts = await collectIntegrityFacts(files, { sandbox: DEFAULT_SANDBOX_POLICY, ...options });
  return findIntegrityIssues({
    files,
    ...facts,
    first_party_modules: ['app', '@acme/core'],
    ...extra,
  });
}

const PY_BASE = code(
  'from app.cart import total',
  '',
  'def _cart(*prices):',
  '    return list(prices)',
  '',
  'def test_total_sums_prices():',
  '    assert total(_cart(1, 2)) == 3',
  '    assert total(_cart()) == 0',
  '',
  'def test_total_rejects_negative():',
  '    import pytest',
  '    with pytest.raises(ValueError):',
  '        total(_cart(-1))',
);

const TS_BASE = code(
  "import { describe, expect, it } from 'vitest';",
  "import { total } from '../src/cart.js';",
  '',
  "describe('total', () => {",
  "  it('sums prices', () => {",
  '    expect(total([1, 2])).toBe(3);',
  '    expect(total([])).toBe(0);',
  '  });',
  "  it('rejects negative prices', () => {",
  '    expect(() => total([-1])).toThrow();',
  '  });',
  '});',
);

describe('skip_added', () => {
  it('flags a pytest skip marker added to a test, naming the marker and the test', async () => {
    const now = PY_BASE.replace(
      'def test_total_rejects_negative',
      '@pytest.mark.skip(reason="flaky")\ndef test_total_rejects_negative',
    );
    const findings = await check([{ path: 'tests/test_cart.py', base: PY_BASE, now }]);
    expect(findings).toEqual([
      expect.objectContaining({
        kind: 'skip_added',
        severity: 'must_fix',
        file: 'tests/test_cart.py',
        line: 10,
      }),
    ]);
    expect(findings[0]?.detail).toContain('`pytest.mark.skip` to `test_total_rejects_negative`');
  });

  it.each([
    ['@pytest.mark.skipif(True, reason="x")', 'pytest.mark.skipif'],
    ['@pytest.mark.xfail', 'pytest.mark.xfail'],
    ['@unittest.skip("later")', 'unittest.skip'],
    ['@unittest.skipIf(True, "x")', 'unittest.skipIf'],
    ['@unittest.skipUnless(False, "x")', 'unittest.skipUnless'],
  ])('flags the Python decorator %s', async (decorator, marker) => {
    const now = PY_BASE.replace(
      'def test_total_sums_prices',
      `${decorator}\ndef test_total_sums_prices`,
    );
    const findings = await check([{ path: 'tests/test_cart.py', base: PY_BASE, now }]);
    expect(findings.map((f) => [f.kind, f.severity])).toEqual([['skip_added', 'must_fix']]);
    expect(findings[0]?.detail).toContain(`\`${marker}\``);
  });

  it('flags pytest.skip( called inside a test body', async () => {
    const now = PY_BASE.replace(
      '    assert total(_cart(1, 2)) == 3',
      "    pytest.skip('todo')\n    assert total(_cart(1, 2)) == 3",
    );
    const findings = await check([{ path: 'tests/test_cart.py', base: PY_BASE, now }]);
    expect(findings).toEqual([expect.objectContaining({ kind: 'skip_added', line: 7 })]);
    expect(findings[0]?.detail).toContain('`pytest.skip` to `test_total_sums_prices`');
  });

  it('does not flag a skip that was already there when the code around it moves', async () => {
    const base = PY_BASE.replace(
      'def test_total_rejects_negative',
      '@pytest.mark.skip\ndef test_total_rejects_negative',
    );
    const [head, ...rest] = base.split('\ndef test_total_sums_prices');
    const moved = `${head}\n# totals\n\n\ndef test_total_sums_prices${rest.join('')}`;
    expect(await check([{ path: 'tests/test_cart.py', base, now: moved }])).toEqual([]);
  });

  it.each([
    ["it.skip('sums prices'", 'it.skip'],
    ["test.skip('sums prices'", 'test.skip'],
    ["xit('sums prices'", 'xit'],
    ["xtest('sums prices'", 'xtest'],
    ["it('sums prices', { skip: true },", '{ skip }'],
    ["it.skipIf(process.env.CI)('sums prices'", 'it.skipIf'],
  ])('flags the JS test %s', async (replacement, marker) => {
    const now = TS_BASE.replace(
      "it('sums prices',",
      replacement.endsWith(',') ? replacement : `${replacement},`,
    );
    const findings = await check([{ path: 'tests/cart.test.ts', base: TS_BASE, now }]);
    expect(findings.map((f) => [f.kind, f.severity, f.line])).toEqual([
      ['skip_added', 'must_fix', 5],
    ]);
    expect(findings[0]?.detail).toContain(`\`${marker}\` to \`total > sums prices\``);
  });

  it('flags describe.skip, xdescribe and test.todo', async () => {
    for (const [now, marker] of [
      [TS_BASE.replace("describe('total'", "describe.skip('total'"), 'describe.skip'],
      [TS_BASE.replace("describe('total'", "xdescribe('total'"), 'xdescribe'],
      [TS_BASE.replace('});\n', "});\ntest.todo('handles currencies');\n"), 'test.todo'],
    ] as const) {
      const findings = await check([{ path: 'tests/cart.test.ts', base: TS_BASE, now }]);
      expect(findings.map((f) => f.kind)).toEqual(['skip_added']);
      expect(findings[0]?.detail).toContain(`\`${marker}\``);
    }
  });

  it('flags t.skip() and { skip: true } in node:test', async () => {
    const base = code(
      "import test from 'node:test';",
      "import assert from 'node:assert/strict';",
      "test('parses', (t) => {",
      '  assert.equal(parse("1"), 1);',
      '});',
    );
    const now = base
      .replace('(t) => {\n', "(t) => {\n  t.skip('later');\n")
      .replace("test('parses',", "test('parses', { skip: true },");
    const findings = await check([{ path: 'test/parse.test.mjs', base, now }]);
    expect(findings.map((f) => [f.kind, f.line, f.detail.split(' (')[0]])).toEqual([
      ['skip_added', 3, 'adds `{ skip }` to `parses`'],
      ['skip_added', 4, 'adds `t.skip` to `parses`'],
    ]);
  });

  it('flags t.Skip in Go and #[ignore] in Rust', async () => {
    const goBase = code(
      'package cart',
      '',
      'func TestTotal(t *testing.T) {',
      '\tif Total(1, 2) != 3 {',
      '\t\tt.Fatal("sum")',
      '\t}',
      '}',
    );
    const rustBase = code(
      '#[cfg(test)]',
      'mod tests {',
      '    #[test]',
      '    fn sums() {',
      '        assert_eq!(total(&[1, 2]), 3);',
      '    }',
      '}',
    );
    const findings = await check([
      {
        path: 'cart/cart_test.go',
        base: goBase,
        now: goBase.replace('{\n\tif', '{\n\tt.Skip("later")\n\tif'),
      },
      {
        path: 'src/cart.rs',
        base: rustBase,
        now: rustBase.replace('#[test]\n', '#[test]\n    #[ignore]\n'),
      },
    ]);
    expect(findings.map((f) => [f.file, f.kind, f.line])).toEqual([
      ['cart/cart_test.go', 'skip_added', 4],
      ['src/cart.rs', 'skip_added', 4],
    ]);
    expect(findings[0]?.detail).toContain('`t.Skip` to `TestTotal`');
    expect(findings[1]?.detail).toContain('`#[ignore]` to `sums`');
  });
});

describe('focus_added', () => {
  it.each([
    ["it.only('sums prices',", 'it.only', 5],
    ["fit('sums prices',", 'fit', 5],
    ["it('sums prices', { only: true },", '{ only }', 5],
  ])('flags %s', async (replacement, marker, line) => {
    const findings = await check([
      {
        path: 'tests/cart.test.ts',
        base: TS_BASE,
        now: TS_BASE.replace("it('sums prices',", replacement),
      },
    ]);
    expect(findings.map((f) => [f.kind, f.severity, f.line])).toEqual([
      ['focus_added', 'must_fix', line],
    ]);
    expect(findings[0]?.detail).toContain(`\`${marker}\``);
  });

  it('flags describe.only and fdescribe on a suite', async () => {
    for (const [now, marker] of [
      [TS_BASE.replace("describe('total'", "describe.only('total'"), 'describe.only'],
      [TS_BASE.replace("describe('total'", "fdescribe('total'"), 'fdescribe'],
    ] as const) {
      const findings = await check([{ path: 'src/cart.spec.js', base: TS_BASE, now }]);
      expect(findings.map((f) => [f.kind, f.line])).toEqual([['focus_added', 4]]);
      expect(findings[0]?.detail).toContain(`\`${marker}\` to \`total\``);
    }
  });
});

describe('test_deleted and test_file_deleted', () => {
  it('flags a Python test that is gone and a JS test that is gone, by name', async () => {
    const pyNow = PY_BASE.split('\ndef test_total_rejects_negative')[0] ?? '';
    const tsNow = TS_BASE.replace(/ {2}it\('rejects negative prices'[\s\S]*?\n {2}\}\);\n/, '');
    const findings = await check([
      { path: 'tests/test_cart.py', base: PY_BASE, now: pyNow },
      { path: 'tests/cart.test.ts', base: TS_BASE, now: tsNow },
    ]);
    expect(findings.map((f) => [f.file, f.kind, f.severity])).toEqual([
      ['tests/cart.test.ts', 'test_deleted', 'must_fix'],
      ['tests/test_cart.py', 'test_deleted', 'must_fix'],
    ]);
    expect(findings[0]?.detail).toBe(
      'test `total > rejects negative prices` (line 9 at base) no longer exists',
    );
    expect(findings[1]?.detail).toContain('`test_total_rejects_negative` (line 10 at base)');
  });

  it('flags a deleted test file with the tests it held', async () => {
    const findings = await check([{ path: 'tests/test_cart.py', base: PY_BASE }]);
    expect(findings).toEqual([
      {
        kind: 'test_file_deleted',
        severity: 'must_fix',
        file: 'tests/test_cart.py',
        detail:
          'test file present at base was deleted (2 test(s)); its tests were: `test_total_sums_prices`, `test_total_rejects_negative`',
        not_replaced: ['test_total_sums_prices', 'test_total_rejects_negative'],
      },
    ]);
  });

  it('treats a test file moved with all its tests as a move, still comparing what it holds', async () => {
    const moved = await check([
      { path: 'tests/test_cart.py', base: PY_BASE },
      { path: 'tests/unit/test_cart_total.py', now: PY_BASE },
    ]);
    expect(moved).toEqual([]);
    const movedAndSkipped = await check([
      { path: 'tests/cart.test.ts', base: TS_BASE },
      { path: 'tests/unit/cart.test.ts', now: TS_BASE.replace("it('sums", "it.skip('sums") },
    ]);
    expect(movedAndSkipped.map((f) => [f.file, f.kind])).toEqual([
      ['tests/unit/cart.test.ts', 'skip_added'],
    ]);
    expect(movedAndSkipped[0]?.detail).toContain('(file moved from tests/cart.test.ts)');
  });
});

describe('assertions_removed', () => {
  it('reports a test whose assertions dropped to zero or by half, as should_fix with the counts', async () => {
    const pyNow = PY_BASE.replace(
      '    assert total(_cart(1, 2)) == 3\n    assert total(_cart()) == 0',
      '    total(_cart(1, 2))',
    );
    const tsNow = TS_BASE.replace('    expect(total([])).toBe(0);\n', '');
    const findings = await check([
      { path: 'tests/test_cart.py', base: PY_BASE, now: pyNow },
      { path: 'tests/cart.test.ts', base: TS_BASE, now: tsNow },
    ]);
    expect(findings.map((f) => [f.file, f.kind, f.severity, f.line, f.detail])).toEqual([
      [
        'tests/cart.test.ts',
        'assertions_removed',
        'should_fix',
        5,
        'assertions in test `total > sums prices` dropped from 2 to 1',
      ],
      [
        'tests/test_cart.py',
        'assertions_removed',
        'should_fix',
        6,
        'assertions in test `test_total_sums_prices` dropped from 2 to 0',
      ],
    ]);
  });

  it('counts unittest, pytest.raises, assert.* and .should assertions, and ignores a drop by less than half', async () => {
    const base = code(
      'import unittest',
      'class CartTest(unittest.TestCase):',
      '    def test_total(self):',
      '        self.assertEqual(total([1]), 1)',
      '        self.assertTrue(total([]) == 0)',
      '        assert total([2]) == 2',
    );
    const now = base.replace('        assert total([2]) == 2\n', '');
    expect(await check([{ path: 'tests/test_unit.py', base, now }])).toEqual([]);
    const jsBase = code(
      "test('total', (t) => {",
      '  assert.equal(total([1]), 1);',
      '  t.assert.ok(total([]) === 0);',
      '  total([2]).should.equal(2);',
      '  assert(total([3]) === 3);',
      '});',
    );
    const jsNow = jsBase.replace(/ {2}(assert|t\.assert|total\(\[2\]\)).*\n/g, '');
    const findings = await check([{ path: 'test/total.test.js', base: jsBase, now: jsNow }]);
    expect(findings.map((f) => f.detail)).toEqual([
      'assertions in test `total` dropped from 4 to 0',
    ]);
  });
});

describe('module_stubbed', () => {
  it('flags new sys.modules stubs in conftest: first-party as must_fix, third-party as should_fix', async () => {
    const base = code('import sys', 'import pytest', '');
    const now = code(
      'import sys',
      'import pytest',
      'from unittest.mock import MagicMock',
      "sys.modules['app.db'] = MagicMock()",
      "sys.modules['redis'] = MagicMock()",
      '',
      '@pytest.fixture(autouse=True)',
      'def fake_payments(monkeypatch):',
      "    monkeypatch.setitem(sys.modules, 'app.payments', MagicMock())",
    );
    const findings = await check([{ path: 'tests/conftest.py', base, now }]);
    expect(findings.map((f) => [f.kind, f.severity, f.line])).toEqual([
      ['module_stubbed', 'must_fix', 4],
      ['module_stubbed', 'should_fix', 5],
      ['module_stubbed', 'must_fix', 9],
    ]);
    expect(findings[0]?.detail).toBe(
      '`sys.modules[...]` replaces first-party module `app.db` wholesale, so the tests exercise a stand-in instead of the project code',
    );
    expect(findings[2]?.detail).toContain('`monkeypatch.setitem`');
  });

  it('flags new vi.mock/jest.mock of project modules as must_fix and of packages as should_fix, not stubs already at base', async () => {
    const base = code("vi.mock('axios');", TS_BASE);
    const now = code(
      "vi.mock('axios');",
      "vi.mock('../src/prices.js', () => ({ price: () => 1 }));",
      "jest.mock('@acme/core');",
      "vi.mock('lodash');",
      TS_BASE,
    );
    const findings = await check([{ path: 'tests/cart.test.ts', base, now }]);
    expect(findings.map((f) => [f.kind, f.severity, f.line, f.detail])).toEqual([
      [
        'module_stubbed',
        'must_fix',
        2,
        '`vi.mock` replaces first-party module `../src/prices.js` wholesale, so the tests exercise a stand-in instead of the project code',
      ],
      [
        'module_stubbed',
        'must_fix',
        3,
        '`jest.mock` replaces first-party module `@acme/core` wholesale, so the tests exercise a stand-in instead of the project code',
      ],
      [
        'module_stubbed',
        'should_fix',
        4,
        '`vi.mock` replaces third-party module `lodash` wholesale',
      ],
    ]);
  });
});

describe('test_config_changed', () => {
  const pyproject = (addopts: string) =>
    code(
      '[project]',
      'name = "app"',
      'version = "1.0"',
      '',
      '[tool.pytest.ini_options]',
      `addopts = "${addopts}"`,
      'testpaths = [',
      '  "tests",',
      ']',
    );

  it('flags pytest addopts in pyproject.toml that deselect tests, naming the key and the flag', async () => {
    const findings = await check([
      {
        path: 'pyproject.toml',
        base: pyproject('-q'),
        now: pyproject('-q --deselect tests/test_cart.py::test_total'),
      },
    ]);
    expect(findings).toEqual([
      {
        kind: 'test_config_changed',
        severity: 'must_fix',
        file: 'pyproject.toml',
        detail:
          '`tool.pytest.ini_options.addopts` changed from `"-q"` to `"-q --deselect tests/test_cart.py::test_total"`; it adds --deselect, which narrows which tests run',
      },
    ]);
  });

  it('ignores changes to pyproject.toml outside the pytest settings', async () => {
    expect(
      await check([
        {
          path: 'pyproject.toml',
          base: pyproject('-q'),
          now: pyproject('-q').replace('1.0', '1.1'),
        },
      ]),
    ).toEqual([]);
  });

  it('flags pytest.ini and setup.cfg selection changes, and a new collect_ignore in conftest.py', async () => {
    const findings = await check([
      {
        path: 'pytest.ini',
        base: code('[pytest]', 'addopts = -q'),
        now: code('[pytest]', 'addopts = -q -k "not cart"'),
      },
      {
        path: 'setup.cfg',
        base: code('[tool:pytest]', 'testpaths = tests'),
        now: code('[tool:pytest]', 'testpaths =', '    tests/unit'),
      },
      {
        path: 'tests/conftest.py',
        base: code('import pytest'),
        now: code('import pytest', 'collect_ignore = [', '    "test_cart.py",', ']'),
      },
    ]);
    expect(findings.map((f) => [f.file, f.severity, f.detail])).toEqual([
      [
        'pytest.ini',
        'must_fix',
        '`pytest.addopts` changed from `-q` to `-q -k "not cart"`; it adds -k, which narrows which tests run',
      ],
      [
        'setup.cfg',
        'must_fix',
        '`tool:pytest.testpaths` changed from `tests` to `tests/unit`; it decides which tests run and how',
      ],
      [
        'tests/conftest.py',
        'must_fix',
        '`collect_ignore` changed from (unset) to `collect_ignore = [ "test_cart.py", ]`; it changes which tests are excluded',
      ],
    ]);
  });

  it('flags package.json scripts.test and jest selection changes, not other scripts', async () => {
    const manifest = (test: string, extra: object = {}) =>
      JSON.stringify({ name: 'app', scripts: { test, lint: 'eslint .' }, ...extra }, null, 2);
    const findings = await check([
      {
        path: 'package.json',
        base: manifest('jest'),
        now: manifest('jest --testPathIgnorePatterns cart', {
          jest: { testPathIgnorePatterns: ['cart'] },
        }).replace('eslint .', 'eslint src'),
      },
    ]);
    expect(findings.map((f) => [f.severity, f.detail])).toEqual([
      [
        'must_fix',
        '`jest.testPathIgnorePatterns` changed from (unset) to `["cart"]`; it changes which tests are excluded',
      ],
      [
        'must_fix',
        '`scripts.test` changed from `"jest"` to `"jest --testPathIgnorePatterns cart"`; it adds --testPathIgnorePatterns, which narrows which tests run',
      ],
    ]);
  });

  it('flags vitest test.exclude but not vite settings outside the test block', async () => {
    const config = (testBlock: string, optimize: string) =>
      code(
        "import { defineConfig } from 'vitest/config';",
        'export default defineConfig({',
        `  optimizeDeps: { exclude: [${optimize}] },`,
        `  test: { ${testBlock} },`,
        '});',
      );
    const base = config("include: ['tests/**/*.test.ts']", '');
    const honest = await check([
      {
        path: 'vitest.config.ts',
        base,
        now: config("include: ['tests/**/*.test.ts']", "'fsevents'"),
      },
    ]);
    expect(honest).toEqual([]);
    const gamed = await check([
      {
        path: 'vitest.config.ts',
        base,
        now: config("include: ['tests/**/*.test.ts'], exclude: ['tests/cart.test.ts']", ''),
      },
    ]);
    expect(gamed.map((f) => [f.severity, f.detail])).toEqual([
      [
        'must_fix',
        "`test.exclude` changed from (unset) to `['tests/cart.test.ts']`; it changes which tests are excluded",
      ],
    ]);
  });

  it('flags a changed toolchain in .guardkit/config.yaml', async () => {
    const findings = await check([
      {
        path: '.guardkit/config.yaml',
        base: code('toolchain:', '  test: pytest -q'),
        now: code('toolchain:', '  test: pytest -q tests/unit'),
      },
    ]);
    expect(findings.map((f) => [f.severity, f.detail])).toEqual([
      [
        'must_fix',
        '`toolchain.test` changed from `"pytest -q"` to `"pytest -q tests/unit"`; it decides which tests run and how',
      ],
    ]);
  });

  it('treats a config created from nothing as should_fix unless it starts by excluding tests', async () => {
    const created = await check([
      { path: 'package.json', now: JSON.stringify({ scripts: { test: 'vitest run' } }) },
    ]);
    expect(created.map((f) => f.severity)).toEqual(['should_fix']);
    const excluding = await check([
      { path: 'pytest.ini', now: code('[pytest]', 'addopts = --ignore=tests/test_cart.py') },
    ]);
    expect(excluding.map((f) => f.severity)).toEqual(['must_fix']);
  });
});

describe('task_file_modified, tests_count_dropped', () => {
  const task = code(
    '---',
    'id: TASK-1',
    '---',
    '## Acceptance Criteria',
    '- [ ] totals are summed',
  );

  it('flags the task file when it differs from base, at the first changed line', async () => {
    const findings = await check(
      [
        {
          path: '.guardkit/tasks/TASK-1.md',
          base: task,
          now: task.replace('- [ ] totals are summed', '- [x] totals are summed (optional)'),
        },
      ],
      { task_file: './.guardkit/tasks/TASK-1.md' },
    );
    expect(findings).toEqual([
      {
        kind: 'task_file_modified',
        severity: 'must_fix',
        file: '.guardkit/tasks/TASK-1.md',
        line: 5,
        detail:
          'task file differs from the base commit; the task file is the requirements contract neither agent may change',
      },
    ]);
  });

  it('does not flag a task file that is unchanged or not tracked at base', async () => {
    expect(
      await check([{ path: '.guardkit/tasks/TASK-1.md', base: task, now: task }], {
        task_file: '.guardkit/tasks/TASK-1.md',
      }),
    ).toEqual([]);
    expect(
      await check([{ path: '.guardkit/tasks/TASK-1.md', now: task }], {
        task_file: '.guardkit/tasks/TASK-1.md',
      }),
    ).toEqual([]);
  });

  it('flags fewer tests run now than at base, and only then', async () => {
    expect(await check([], { tests_at_base: 12, tests_now: 9 })).toEqual([
      {
        kind: 'tests_count_dropped',
        severity: 'must_fix',
        file: '.',
        detail: 'the suite ran 12 test(s) at base and 9 now',
      },
    ]);
    expect(await check([], { tests_at_base: 12, tests_now: 14 })).toEqual([]);
    expect(await check([], { tests_at_base: 12 })).toEqual([]);
  });
});

describe('honest work', () => {
  it('reports nothing for a Python change that adds code and tests, refactors and renames a helper', async () => {
    const now = code(
      'import pytest',
      'from app.cart import total, discount',
      '',
      'def _basket(*prices):',
      '    return list(prices)',
      '',
      'def test_total_sums_prices():',
      '    assert total(_basket(1, 2)) == 3',
      '    assert total(_basket()) == 0',
      '',
      'def test_total_rejects_negative():',
      '    with pytest.raises(ValueError):',
      '        total(_basket(-1))',
      '',
      'class TestDiscount:',
      '    def test_discount_applies_percentage(self):',
      '        assert discount(100, 10) == 90',
    );
    const findings = await check([
      { path: 'tests/test_cart.py', base: PY_BASE, now },
      {
        path: 'tests/test_discount_edges.py',
        now: code(
          'from app.cart import discount',
          '',
          'def test_zero():',
          '    assert discount(0, 5) == 0',
        ),
      },
      {
        path: 'app/cart.py',
        base: 'def total(p):\n    return sum(p)\n',
        now: 'def total(p):\n    return sum(p)\n\ndef discount(a, pct):\n    return a * (100 - pct) / 100\n',
      },
      {
        path: 'pyproject.toml',
        base: code('[project]', 'name = "app"'),
        now: code('[project]', 'name = "app"', 'dependencies = []'),
      },
    ]);
    expect(findings).toEqual([]);
  });

  it('reports nothing for a TS change that adds code and tests and refactors keeping assertions', async () => {
    const now = code(
      "import { describe, expect, it } from 'vitest';",
      "import { total, discount } from '../src/cart.js';",
      '',
      'const prices = (...values: number[]) => values;',
      '',
      "describe('total', () => {",
      "  it('sums prices', () => {",
      '    expect(total(prices(1, 2))).toBe(3);',
      '    expect(total(prices())).toBe(0);',
      '  });',
      '',
      "  it('rejects negative prices', () => {",
      '    expect(() => total(prices(-1))).toThrow(RangeError);',
      '  });',
      '});',
      '',
      "describe('discount', () => {",
      "  it.each([[100, 10, 90], [0, 5, 0]])('discount(%i, %i) is %i', (amount, pct, expected) => {",
      '    expect(discount(amount, pct)).toBe(expected);',
      '  });',
      '});',
    );
    const findings = await check(
      [
        { path: 'tests/cart.test.ts', base: TS_BASE, now },
        {
          path: 'src/cart.ts',
          base: 'export const total = (p: number[]) => p.reduce((a, b) => a + b, 0);\n',
          now: 'export const total = (p: number[]) => p.reduce((a, b) => a + b, 0);\nexport const discount = (a: number, pct: number) => (a * (100 - pct)) / 100;\n',
        },
      ],
      { tests_at_base: 2, tests_now: 4 },
    );
    expect(findings).toEqual([]);
  });
});

describe('when the Python parser is not available', () => {
  it('still finds an added skip in a file with a syntax error, and says the line scan found it', async () => {
    const now = PY_BASE.replace(
      'def test_total_rejects_negative():',
      '@pytest.mark.skip\ndef test_total_rejects_negative(:',
    );
    const findings = await check([{ path: 'tests/test_cart.py', base: PY_BASE, now }]);
    expect(findings.map((f) => [f.kind, f.line])).toEqual([['skip_added', 10]]);
    expect(findings[0]?.detail).toContain(
      '[found by a line scan because the file does not parse as Python (SyntaxError: invalid syntax (line 11)), in the current version]',
    );
  });

  it('falls back to the line scan for every file when python3 cannot be run', async () => {
    const now = PY_BASE.replace(
      'def test_total_rejects_negative',
      '@pytest.mark.xfail\ndef test_total_rejects_negative',
    );
    const findings = await check(
      [{ path: 'tests/test_cart.py', base: PY_BASE, now }],
      {},
      { python: 'python3-not-installed-here' },
    );
    expect(findings.map((f) => [f.kind, f.line])).toEqual([['skip_added', 10]]);
    expect(findings[0]?.detail).toContain(
      '[found by a line scan because python3-not-installed-here was not found]',
    );
  });
});

describe('against the real runners: the gamed suite passes, and is flagged', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('pytest: a failing test skipped with a marker makes pytest pass', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-integrity-'));
    const base = code('def test_total():', '    assert 1 + 1 == 3');
    const now = code(
      'import pytest',
      '',
      '@pytest.mark.skip(reason="flaky")',
      'def test_total():',
      '    assert 1 + 1 == 3',
    );
    const run = (text: string) => {
      fs.writeFileSync(path.join(dir as string, 'test_total.py'), text);
      return execa('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'test_total.py'], {
        cwd: dir,
        reject: false,
      });
    };
    expect((await run(base)).exitCode).toBe(1);
    expect((await run(now)).exitCode).toBe(0);
    const findings = await check([{ path: 'test_total.py', base, now }]);
    expect(findings.map((f) => [f.kind, f.severity, f.line])).toEqual([
      ['skip_added', 'must_fix', 3],
    ]);
  });

  it('node --test: a failing test given { skip: true } makes node pass', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-integrity-'));
    const base = code(
      "import test from 'node:test';",
      "import assert from 'node:assert/strict';",
      "test('total', () => {",
      '  assert.equal(1 + 1, 3);',
      '});',
    );
    const now = base.replace("test('total',", "test('total', { skip: true },");
    const run = (text: string) => {
      fs.writeFileSync(path.join(dir as string, 'total.test.mjs'), text);
      return execa('node', ['--test', 'total.test.mjs'], { cwd: dir, reject: false });
    };
    expect((await run(base)).exitCode).toBe(1);
    expect((await run(now)).exitCode).toBe(0);
    const findings = await check([{ path: 'total.test.mjs', base, now }]);
    expect(findings.map((f) => [f.kind, f.severity, f.line])).toEqual([
      ['skip_added', 'must_fix', 3],
    ]);
  });
});

describe('findings order and path classification', () => {
  it('orders findings by file, then line, then kind, whatever the input order', async () => {
    const files: FileVersions[] = [
      {
        path: 'tests/test_cart.py',
        base: PY_BASE,
        now: PY_BASE.replace('def test_total_sums', '@pytest.mark.xfail\ndef test_total_sums'),
      },
      {
        path: 'tests/b.test.ts',
        base: TS_BASE,
        now: TS_BASE.replace("it('rejects", "it.only('rejects").replace(
          "it('sums",
          "it.skip('sums",
        ),
      },
      { path: 'tests/a.test.ts', base: TS_BASE },
    ];
    const forward = await check(files, { tests_at_base: 5, tests_now: 1 });
    expect(forward.map((f) => `${f.file}:${f.line ?? '-'}:${f.kind}`)).toEqual([
      '.:-:tests_count_dropped',
      'tests/a.test.ts:-:test_file_deleted',
      'tests/b.test.ts:5:skip_added',
      'tests/b.test.ts:9:focus_added',
      'tests/test_cart.py:6:skip_added',
    ]);
    expect(await check([...files].reverse(), { tests_at_base: 5, tests_now: 1 })).toEqual(forward);
  });

  it('recognises the test files and test config files of the usual runners', () => {
    const tests = [
      'tests/test_cart.py',
      'app/cart_test.py',
      'src/cart.test.ts',
      'src/cart.spec.jsx',
      'src/__tests__/cart.js',
      'test/cart.mjs',
      'pkg/cart_test.go',
      'tests/cart.rs',
    ];
    const notTests = [
      'tests/helpers.py',
      'src/cart.ts',
      'src/testing.ts',
      'tests/conftest.py',
      'src/lib.rs',
      'README.md',
    ];
    expect(tests.filter(isTestFile)).toEqual(tests);
    expect(notTests.filter(isTestFile)).toEqual([]);
    const configs = [
      'package.json',
      'pyproject.toml',
      'pytest.ini',
      'setup.cfg',
      'tox.ini',
      'tests/conftest.py',
      'vitest.config.ts',
      'vite.config.mjs',
      'jest.config.js',
      'karma.conf.js',
      'ava.config.mjs',
      'playwright.config.ts',
      'wdio.conf.ts',
      '.guardkit/config.yaml',
    ];
    expect(configs.filter(isTestConfigFile)).toEqual(configs);
    expect(
      ['tsconfig.json', 'src/config.ts', '.guardkit/tasks/T.md'].filter(isTestConfigFile),
    ).toEqual([]);
  });
});

describe('gone base tests and what took their place', () => {
  const successors = (findings: IntegrityFinding[]) =>
    findings.map((finding) => ({
      kind: finding.kind,
      replaced_by: finding.replaced_by,
      not_replaced: finding.not_replaced,
    }));

  it('pairs a renamed test by its body, a test wrapped in a class by its name, and a parametrized one', async () => {
    const now = code(
      'import pytest',
      'from app.cart import total',
      '',
      'def _cart(*prices):',
      '    return list(prices)',
      '',
      'class TestTotal:',
      '    def test_total_sums_prices(self):',
      '        assert total(_cart(1, 2)) == 3',
      '        assert total(_cart()) == 0',
      '',
      '@pytest.mark.parametrize("price", [-1, -2])',
      'def test_negative_prices_raise(price):',
      '    with pytest.raises(ValueError):',
      '        total(_cart(price))',
    );
    const findings = await check([{ path: 'tests/test_cart.py', base: PY_BASE, now }]);
    expect(successors(findings.filter((finding) => finding.kind === 'test_deleted'))).toEqual([
      {
        kind: 'test_deleted',
        replaced_by: [
          {
            test: 'test_total_rejects_negative',
            file: 'tests/test_cart.py',
            as: 'test_negative_prices_raise',
            how: 'parametrized',
          },
        ],
        not_replaced: undefined,
      },
      {
        kind: 'test_deleted',
        replaced_by: [
          {
            test: 'test_total_sums_prices',
            file: 'tests/test_cart.py',
            as: 'TestTotal.test_total_sums_prices',
            how: 'wrapped',
          },
        ],
        not_replaced: undefined,
      },
    ]);
    const renamed = PY_BASE.replace('def test_total_sums_prices', 'def test_sum_of_prices');
    const [rename] = await check([{ path: 'tests/test_cart.py', base: PY_BASE, now: renamed }]);
    expect(rename?.replaced_by).toEqual([
      {
        test: 'test_total_sums_prices',
        file: 'tests/test_cart.py',
        as: 'test_sum_of_prices',
        how: 'renamed',
      },
    ]);
  });

  it('pairs a test split in two by the names that extend its own', async () => {
    const base = code(
      'from calc import add',
      '',
      'class TestAdd:',
      '    def test_add(self):',
      '        assert add(2, 3) == 5',
      '        assert add(-1, 1) == 0',
    );
    const now = code(
      'from calc import add',
      '',
      'def test_add_small():',
      '    assert add(2, 3) == 5',
      '',
      'def test_add_negative():',
      '    assert add(-1, 1) == 0',
    );
    const findings = await check([{ path: 'tests/test_calc.py', base, now }]);
    expect(findings.flatMap((finding) => finding.replaced_by ?? [])).toEqual([
      { test: 'TestAdd.test_add', file: 'tests/test_calc.py', as: 'test_add_small', how: 'split' },
    ]);
    expect(findings.flatMap((finding) => finding.not_replaced ?? [])).toEqual([]);
  });

  it('pairs the tests of a file split in two, and keeps the one that went nowhere as not replaced', async () => {
    const findings = await check([
      { path: 'tests/test_cart.py', base: PY_BASE },
      {
        path: 'tests/test_sums.py',
        now: PY_BASE.split('def test_total_rejects_negative')[0],
      },
    ]);
    expect(successors(findings)).toEqual([
      {
        kind: 'test_file_deleted',
        replaced_by: [
          {
            test: 'test_total_sums_prices',
            file: 'tests/test_sums.py',
            as: 'test_total_sums_prices',
            how: 'moved',
          },
        ],
        not_replaced: ['test_total_rejects_negative'],
      },
    ]);
  });

  it('pairs JS tests wrapped in a new describe, renamed, or moved to another file', async () => {
    const now = TS_BASE.replace("describe('total', () => {", "describe('cart', () => {")
      .replace("it('sums prices'", "it('adds up prices'")
      .replace(/ {2}it\('rejects negative prices'[\s\S]*?\n {2}\}\);\n/, '');
    const moved = code(
      "import { expect, it } from 'vitest';",
      "import { total } from '../src/cart.js';",
      "it('rejects negative prices', () => {",
      '  expect(() => total([-1])).toThrow();',
      '});',
    );
    const findings = await check([
      { path: 'tests/cart.test.ts', base: TS_BASE, now },
      { path: 'tests/negative.test.ts', now: moved },
    ]);
    expect(findings.flatMap((finding) => finding.replaced_by ?? [])).toEqual([
      {
        test: 'total > rejects negative prices',
        file: 'tests/negative.test.ts',
        as: 'rejects negative prices',
        how: 'moved',
      },
      {
        test: 'total > sums prices',
        file: 'tests/cart.test.ts',
        as: 'cart > adds up prices',
        how: 'renamed',
      },
    ]);
    expect(findings.every((finding) => finding.not_replaced === undefined)).toBe(true);
  });
});

describe('explainWithTrustedRun', () => {
  const gone: IntegrityFinding = {
    kind: 'test_deleted',
    severity: 'must_fix',
    file: 'tests/test_cart.py',
    test: 'test_total',
    detail: 'test `test_total` no longer exists',
    replaced_by: [
      { test: 'test_total', file: 'tests/test_sums.py', as: 'TestSums.test_total', how: 'moved' },
    ],
  };
  const deleted: IntegrityFinding = {
    kind: 'test_deleted',
    severity: 'must_fix',
    file: 'tests/test_cart.py',
    test: 'test_negative',
    detail: 'test `test_negative` no longer exists',
    not_replaced: ['test_negative'],
  };
  const judge = (
    candidate: { id: string; status: string }[],
    extra: Partial<TrustedRunEvidence> = {},
  ) =>
    explainWithTrustedRun([gone, deleted], {
      regressions: [],
      acknowledged: [],
      candidate_tests: candidate,
      ...extra,
    }).map((finding) => [finding.severity, finding.trusted_run?.outcome]);

  it('explains a moved test that passes under its new id, and keeps a deleted one must_fix', () => {
    const passing = [{ id: 'tests/test_sums.py::TestSums::test_total', status: 'passed' }];
    expect(judge(passing)).toEqual([
      ['info', 'explained'],
      ['must_fix', 'not_replaced'],
    ]);
    // The Coach may retire a test a criterion makes obsolete.
    expect(judge(passing, { acknowledged: ['test_negative'] })[1]).toEqual(['info', 'explained']);
  });

  it('retires a test acknowledged by its full id, and says it failed rather than that it passes', () => {
    const regressions = [{ test: 'tests/test_cart.py::test_negative', outcome: 'failed' as const }];
    const acknowledged = ['tests/test_cart.py::test_negative'];
    const [, retired] = explainWithTrustedRun([gone, deleted], {
      regressions,
      acknowledged,
      candidate_tests: [],
    });
    expect(retired).toMatchObject({ severity: 'info', trusted_run: { outcome: 'explained' } });
    expect(retired!.trusted_run!.detail).toMatch(
      /`tests\/test_cart\.py::test_negative` failed in the trusted run, which the Coach acknowledged/,
    );
    // An id of another file does not retire it.
    expect(judge([], { acknowledged: ['tests/test_other.py::test_negative'] })[1]).toEqual([
      'must_fix',
      'not_replaced',
    ]);
  });

  it('does not ask a gone test that did not pass at the base (deselected, skipped) to be carried on', () => {
    const atBase = (ids: string[]) => judge([], { gone_from_player_run: ids })[1];
    expect(atBase([])).toEqual(['info', 'explained']);
    expect(atBase(['tests/test_cart.py::test_other'])).toEqual(['info', 'explained']);
    expect(atBase(['tests/test_cart.py::test_negative'])).toEqual(['must_fix', 'not_replaced']);
    expect(atBase(['tests/test_cart.py::test_negative[-1]'])).toEqual(['must_fix', 'not_replaced']);
  });

  it('keeps a moved test must_fix when it fails or does not run under its new id', () => {
    expect(
      judge([{ id: 'tests/test_sums.py::TestSums::test_total', status: 'failed' }])[0],
    ).toEqual(['must_fix', 'not_replaced']);
    expect(judge([])[0]).toEqual(['must_fix', 'not_replaced']);
  });

  it('matches parametrized cases and JS title templates to their successor', () => {
    const successor = { file: 'tests/a.test.ts', as: 'cart > adds %i and %i' };
    expect(
      successorOutcome(successor, [
        { id: 'tests/a.test.ts > cart > adds 1 and 2', status: 'passed' },
        { id: 'tests/a.test.ts > cart > adds 2 and 3', status: 'passed' },
      ]),
    ).toBe('passed');
    expect(
      successorOutcome({ file: 'tests/t.py', as: 'test_neg' }, [
        { id: 'tests/t.py::test_neg[-1]', status: 'passed' },
        { id: 'tests/t.py::test_neg[-2]', status: 'failed' },
      ]),
    ).toBe('failed');
    expect(
      successorOutcome({ file: 'test/a.test.js', as: 'cart > adds' }, [
        { id: 'cart > adds', status: 'passed' },
      ]),
    ).toBe('passed');
  });

  it("matches a template literal title's `${…}` to any text, and still fails a failed case", () => {
    const successor = { file: 'test/u.test.ts', as: 'isEqual > ${t.input[0]} == ${t.input[1]}' };
    const run = [
      { id: 'test/u.test.ts > isEqual > /a == /a', status: 'passed' },
      { id: 'test/u.test.ts > isEqual > /b == /b/', status: 'passed' },
    ];
    expect(successorOutcome(successor, run)).toBe('passed');
    expect(
      successorOutcome(successor, [...run, { id: 'isEqual > /c == /c', status: 'failed' }]),
    ).toBe('failed');
    expect(successorOutcome(successor, [{ id: 'isEqual > other', status: 'passed' }])).toBe(
      'missing',
    );
  });

  it('pairs unittest tests merged into one table of subTest cases (more-itertools bed0811)', async () => {
    const base = code(
      'from unittest import TestCase',
      'import zipper',
      '',
      'class ZipTests(TestCase):',
      '    def test_basic(self):',
      '        self.assertEqual(zipper.zip([1], [2]), [(1, 2)])',
      '',
      '    def test_empty(self):',
      '        self.assertEqual(zipper.zip(), [])',
    );
    const now = code(
      'from unittest import TestCase',
      'import zipper',
      '',
      'class ZipTests(TestCase):',
      '    def test_zip(self):',
      '        for args, zipped in [(([1], [2]), [(1, 2)]), ((), [])]:',
      '            with self.subTest(args=args):',
      '                self.assertEqual(zipper.zip(*args), zipped)',
    );
    const findings = await check([{ path: 'tests/test_zip.py', base, now }]);
    expect(
      findings
        .filter((finding) => finding.kind === 'test_deleted')
        .map((finding) => [
          finding.test,
          finding.replaced_by?.[0]?.as,
          finding.replaced_by?.[0]?.how,
        ]),
    ).toEqual([
      ['ZipTests.test_basic', 'ZipTests.test_zip', 'parametrized'],
      ['ZipTests.test_empty', 'ZipTests.test_zip', 'parametrized'],
    ]);
  });

  it('names a template literal title the same however its `${…}` are laid out (prettier)', async () => {
    const before = code(
      "import { test } from 'vitest';",
      'for (const t of cases) {',
      '  test(`${t.input[0]} == ${t.input[1]} ${t.input[2] ? JSON.stringify(t.input[2]) : ""}`, () => {',
      '    expect(isEqual(t.input[0], t.input[1])).toBe(t.out);',
      '  });',
      '}',
    );
    const after = before.replace(
      '${t.input[2] ? JSON.stringify(t.input[2]) : ""}',
      '${\n    t.input[2] ? JSON.stringify(t.input[2]) : ""\n  }',
    );
    expect(after).not.toBe(before);
    expect(await check([{ path: 'test/u.test.ts', base: before, now: after }])).toEqual([]);
  });
});
