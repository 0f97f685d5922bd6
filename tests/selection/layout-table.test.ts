import { afterAll, describe, expect, it } from 'vitest';
import { trustedSelection } from '../../src/scope/product-code.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import {
  ALIASES,
  GO,
  GO_MOD,
  goCode,
  goTest,
  JAVASCRIPT,
  PY_CODE,
  PY_TEST,
  PYTHON,
  pyproject,
  RUST,
} from '../helpers/layouts.js';

/**
 * The layout table of docs/default-deny.md, cell by cell, on real repositories: the Player changes
 * the product file and the base test beside it. The trusted runs must take the product file (with
 * the reason they give the Coach) and leave the test the base's: the first lets an honest fix be
 * judged, the second is what refuses "break the code + weaken the base test". The end-to-end
 * approvals and refusals on real runners are in tests/evaluation/code-under-test.test.ts; this
 * table keeps every cell cheap enough to run on every change.
 */
const repos: TempRepo[] = [];
afterAll(() => repos.forEach((repo) => repo.remove()));

/** The Player's change to a file: a line the language ignores, so only the path matters. */
function edited(file: string, content: string): string {
  return `${content}${/\.py$/.test(file) ? '# changed\n' : '// changed\n'}`;
}

describe.each([
  ['Python', PYTHON],
  ['JS/TS', JAVASCRIPT],
  ['JS/TS module aliases and workspaces', ALIASES],
  ['Rust', RUST],
  ['Go', GO],
])('the layout table, %s', (_language, layouts) => {
  it.each(layouts.map((layout) => [layout.name, layout] as const))(
    '%s: the product file is taken, the base test stays the base’s',
    async (_name, layout) => {
      const repo = makeRepo(layout.base, 'coachgate-layout-');
      repos.push(repo);
      const base = repo.git('rev-parse', 'HEAD');
      for (const file of [layout.product, layout.test])
        repo.write(file, edited(file, layout.base[file]!));

      const selection = await trustedSelection(repo.dir, base);

      expect(selection.code).toEqual([layout.product]);
      const reason = selection.taken_because.find((entry) => entry.file === layout.product);
      expect(reason?.reason).toMatch(layout.because);
      expect(selection.left_out).toEqual([{ file: layout.test, change: 'modified' }]);
      expect(selection.unjudged_code).toEqual([]);
    },
  );
});

describe('test support inside a source root', () => {
  const HELPER =
    'import pytest\n\n\ndef assert_total(values, expected):\n    assert sum(values) == expected\n';
  const BARE_HELPER = HELPER.replace('import pytest\n\n\n', '');
  const base = (extra: Record<string, string>) => ({
    'pyproject.toml': pyproject('[tool.setuptools.packages.find]\nwhere = ["src"]\n'),
    'src/shop/__init__.py': '',
    'src/shop/cart.py': PY_CODE,
    'tests/test_cart.py':
      'from shop.cart import total\nfrom shop.checks import assert_total\n\n\ndef test_total():\n    assert_total([1, 2], total([1, 2]))\n',
    ...extra,
  });

  async function selected(files: Record<string, string>, changed: string[]) {
    const repo = makeRepo(files, 'coachgate-support-');
    repos.push(repo);
    const commit = repo.git('rev-parse', 'HEAD');
    for (const file of changed) repo.write(file, edited(file, files[file]!));
    return trustedSelection(repo.dir, commit);
  }

  /** The helper and the code both changed: the code is taken, the helper stays the base's. */
  async function expectHelperKept(files: Record<string, string>, helper: string, code: string) {
    const selection = await selected(files, [helper, code]);
    expect(selection.code).toEqual([code]);
    expect(selection.test_support).toEqual([helper]);
  }

  it('keeps an assertion helper only the tests import the base’s, and takes the code', async () => {
    const files = base({ 'src/shop/checks.py': HELPER });
    await expectHelperKept(files, 'src/shop/checks.py', 'src/shop/cart.py');
  });

  it.each([
    ['the package imports it', { 'src/shop/__init__.py': 'from . import checks\n' }],
    [
      'a manifest names it (a pytest plugin)',
      {
        'pyproject.toml': pyproject(
          '[project.entry-points.pytest11]\nshop = "shop.checks"\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
        ),
      },
    ],
  ])('keeps it code when %s', async (_why, extra) => {
    const selection = await selected(base({ 'src/shop/checks.py': HELPER, ...extra }), [
      'src/shop/checks.py',
    ]);
    expect(selection.code).toEqual(['src/shop/checks.py']);
  });

  it('keeps a bare-assert helper (no test framework) the base’s, in a source root or not', async () => {
    const inRoot = base({ 'src/shop/checks.py': BARE_HELPER });
    await expectHelperKept(inRoot, 'src/shop/checks.py', 'src/shop/cart.py');
    // No manifest: app/ is code because the tests import it; the helper beside it is not.
    await expectHelperKept(
      {
        'pytest.ini': '[pytest]\npythonpath = .\n',
        'app/__init__.py': '',
        'app/cart.py': PY_CODE,
        'app/checks.py':
          'def assert_total(values, expected):\n    if sum(values) != expected:\n        raise AssertionError(values)\n',
        'tests/test_cart.py':
          'from app.cart import total\nfrom app.checks import assert_total\n\n\ndef test_total():\n    assert_total([1, 2], total([1, 2]))\n',
      },
      'app/checks.py',
      'app/cart.py',
    );
  });

  it('keeps a bare-assert helper code when product code uses it', async () => {
    const selection = await selected(
      base({
        'src/shop/checks.py': BARE_HELPER,
        'src/shop/order.py': 'from shop.checks import assert_total\n',
      }),
      ['src/shop/checks.py'],
    );
    expect(selection.code).toEqual(['src/shop/checks.py']);
  });

  it('keeps a JS expect… helper over node:assert the base’s when only tests import it', async () => {
    await expectHelperKept(
      {
        'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
        'app/greet.js': 'export const greet = (name) => `Hello, ${name}!`;\n',
        'app/expect-greeting.js':
          "import assert from 'node:assert/strict';\nexport const expectGreeting = (text, name) => assert.equal(text, `Hello, ${name}!`);\n",
        'test/greet.test.js':
          "import test from 'node:test';\nimport { greet } from '../app/greet.js';\nimport { expectGreeting } from '../app/expect-greeting.js';\ntest('greets', () => expectGreeting(greet('Ada'), 'Ada'));\n",
      },
      'app/expect-greeting.js',
      'app/greet.js',
    );
  });

  it('keeps a testing module without a test framework code (click.testing)', async () => {
    const runner = 'def invoke(values):\n    return sum(values)\n';
    const selection = await selected(base({ 'src/shop/checks.py': runner }), [
      'src/shop/checks.py',
    ]);
    expect(selection.code).toEqual(['src/shop/checks.py']);
  });
});

describe('Go test support', () => {
  const CHECK = `package check\n\nimport "testing"\n\nfunc Equal(t *testing.T, got, want int) {\n\tif got != want {\n\t\tt.Fatal(got, want)\n\t}\n}\n`;
  const TEST = `package shop\n\nimport (\n\t"testing"\n\n\t"example.com/shop/CHECK"\n)\n\nfunc TestTotal(t *testing.T) { check.Equal(t, Total([]int{1, 2}), 3) }\n`;
  async function selected(files: Record<string, string>, changed: string[]) {
    const all: Record<string, string> = { 'go.mod': GO_MOD, 'shop.go': goCode('shop'), ...files };
    const repo = makeRepo(all, 'coachgate-go-support-');
    repos.push(repo);
    const commit = repo.git('rev-parse', 'HEAD');
    for (const file of changed) repo.write(file, edited(file, all[file]!));
    return trustedSelection(repo.dir, commit);
  }

  it('keeps a helper package that imports testing the base’s, all its files, and takes the code', async () => {
    const selection = await selected(
      {
        'internal/check/check.go': CHECK,
        'internal/check/same.go': 'package check\n\nfunc same(a, b int) bool { return a == b }\n',
        'shop_test.go': TEST.replace('CHECK', 'internal/check'),
      },
      ['shop.go', 'internal/check/check.go', 'internal/check/same.go'],
    );
    expect(selection.code).toEqual(['shop.go']);
    expect(selection.test_support).toEqual(['internal/check/check.go', 'internal/check/same.go']);
  });

  it.each([
    [
      'the product imports it',
      { 'report.go': 'package shop\n\nimport _ "example.com/shop/check"\n' },
    ],
    [
      'it is an API with tests of its own (testify’s suite)',
      { 'check/check_test.go': 'package check\n' },
    ],
  ])('keeps it code when %s', async (_why, extra) => {
    const selection = await selected(
      { 'check/check.go': CHECK, 'shop_test.go': TEST.replace('CHECK', 'check'), ...extra },
      ['check/check.go'],
    );
    expect(selection.code).toEqual(['check/check.go']);
  });

  it('leaves testdata/ the base’s: go never builds it, the tests read it', async () => {
    const selection = await selected(
      {
        'testdata/want.txt': '3\n',
        'testdata/gen.go': 'package main\n',
        'shop_test.go': goTest('shop'),
      },
      ['testdata/want.txt', 'testdata/gen.go'],
    );
    expect(selection.code).toEqual([]);
    expect(selection.unjudged_code).toEqual([]);
    expect(selection.left_out.map((entry) => entry.file)).toEqual([
      'testdata/gen.go',
      'testdata/want.txt',
    ]);
  });
});

describe('changes that are not the shipped code', () => {
  it.each([
    'docs/conf.py',
    'examples/split.js',
    'scripts/generate.py',
    'benchmarks/middleware.js',
    'typing_tests/baseline.py',
  ])(
    '%s alone is not a vacuous evaluation (honest upstream commits change these)',
    async (file) => {
      const content = /\.py$/.test(file) ? 'A = 1\n' : 'export const a = 1;\n';
      const repo = makeRepo(
        {
          'pytest.ini': '[pytest]\n',
          'app/cart.py': PY_CODE,
          'tests/test_cart.py': PY_TEST('app.cart'),
          [file]: content,
        },
        'coachgate-shipped-',
      );
      repos.push(repo);
      const base = repo.git('rev-parse', 'HEAD');
      repo.write(file, edited(file, content));
      const selection = await trustedSelection(repo.dir, base);
      expect(selection.unjudged_code).toEqual([]);
      expect(selection.left_out).toEqual([{ file, change: 'modified' }]);
    },
  );
});
