import { afterAll, describe, expect, it } from 'vitest';
import { trustedSelection } from '../../src/evaluation/product-code.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/**
 * The layout table of docs/default-deny.md, cell by cell, on real repositories: the Player changes
 * the product file and the base test beside it. The trusted runs must take the product file (with
 * the reason they give the Coach) and leave the test the base's: the first lets an honest fix be
 * judged, the second is what refuses "break the code + weaken the base test". The end-to-end
 * approvals and refusals on real runners are in tests/evaluation/code-under-test.test.ts; this
 * table keeps every cell cheap enough to run on every change.
 */
interface Layout {
  name: string;
  base: Record<string, string>;
  product: string;
  test: string;
  /** Part of the reason the selection gives for the product file. */
  because: RegExp;
}

const PY_TEST = (module: string) =>
  `from ${module} import total\n\ndef test_total():\n    assert total([1, 2]) == 3\n`;
const PY_CODE = 'def total(values):\n    return sum(values)\n';
const JS_TEST_ESM = (from: string) =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { total } from '${from}';\ntest('total', () => assert.equal(total([1, 2]), 3));\n`;
const JS_CODE_ESM =
  'export function total(values) {\n  return values.reduce((a, b) => a + b, 0);\n}\n';
const pyproject = (body: string) => `[project]\nname = "shop"\nversion = "1.0"\n${body}`;

const PYTHON: Layout[] = [
  {
    name: 'pyproject, setuptools with src/',
    base: {
      'pyproject.toml': pyproject('[tool.setuptools.packages.find]\nwhere = ["src"]\n'),
      'src/shop/__init__.py': '',
      'src/shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'src/shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'pyproject, hatch',
    base: {
      'pyproject.toml': `${pyproject('')}[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n[tool.hatch.build.targets.wheel]\npackages = ["src/shop"]\n`,
      'src/shop/__init__.py': '',
      'src/shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'src/shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'pyproject, poetry',
    base: {
      'pyproject.toml':
        '[tool.poetry]\nname = "shop"\nversion = "1.0"\npackages = [{ include = "shop", from = "src" }]\n',
      'src/shop/__init__.py': '',
      'src/shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'src/shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'pyproject, flit (module at the root)',
    base: {
      'pyproject.toml': `${pyproject('')}[build-system]\nrequires = ["flit_core"]\nbuild-backend = "flit_core.buildapi"\n`,
      'shop/__init__.py': '',
      'shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'pyproject, pdm with package-dir',
    base: {
      'pyproject.toml': `${pyproject('')}[tool.pdm.build]\npackage-dir = "src"\n`,
      'src/shop/__init__.py': '',
      'src/shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'src/shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'setup.cfg with package_dir',
    base: {
      'setup.cfg':
        '[metadata]\nname = shop\n[options]\npackage_dir =\n    =src\npackages = find:\n[options.packages.find]\nwhere = src\n',
      'src/shop/__init__.py': '',
      'src/shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'src/shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'setup.py with find_packages',
    base: {
      'setup.py':
        'from setuptools import setup, find_packages\nsetup(name="shop", packages=find_packages(exclude=["tests"]))\n',
      'shop/__init__.py': '',
      'shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('shop.cart'),
    },
    product: 'shop/cart.py',
    test: 'tests/test_cart.py',
    because: /./,
  },
  {
    name: 'no manifest: pytest.ini and an app package',
    base: {
      'pytest.ini': '[pytest]\ntestpaths = tests\n',
      'requirements.txt': 'requests\n',
      'app/__init__.py': '',
      'app/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('app.cart'),
    },
    product: 'app/cart.py',
    test: 'tests/test_cart.py',
    because: /imported by tests\/test_cart\.py/,
  },
  {
    name: 'no manifest: flat modules at the root',
    base: { 'cart.py': PY_CODE, 'test_cart.py': PY_TEST('cart') },
    product: 'cart.py',
    test: 'test_cart.py',
    because: /flat layout/,
  },
  {
    name: 'namespace package (no __init__.py), setup.cfg [tool:pytest]',
    base: {
      'setup.cfg': '[tool:pytest]\ntestpaths = tests\n',
      'acme/shop/cart.py': PY_CODE,
      'tests/test_cart.py': PY_TEST('acme.shop.cart'),
    },
    product: 'acme/shop/cart.py',
    test: 'tests/test_cart.py',
    because: /imported by tests\/test_cart\.py/,
  },
  {
    name: 'Django-style apps: tests.py inside the app, relative imports',
    base: {
      'manage.py': 'import sys\nif __name__ == "__main__":\n    print(sys.argv)\n',
      'mysite/__init__.py': '',
      'mysite/settings.py': 'INSTALLED_APPS = ["polls"]\n',
      'pytest.ini': '[pytest]\npython_files = tests.py test_*.py\n',
      'polls/__init__.py': '',
      'polls/views.py': PY_CODE,
      'polls/tests.py': PY_TEST('.views'),
    },
    product: 'polls/views.py',
    test: 'polls/tests.py',
    because: /polls\//,
  },
  {
    name: 'monorepo subfolder with its own pytest config',
    base: {
      'services/api/pytest.ini': '[pytest]\ntestpaths = tests\n',
      'services/api/app/__init__.py': '',
      'services/api/app/cart.py': PY_CODE,
      'services/api/tests/test_cart.py': PY_TEST('app.cart'),
      'services/web/package.json': '{"name": "web"}\n',
    },
    product: 'services/api/app/cart.py',
    test: 'services/api/tests/test_cart.py',
    because: /imported by services\/api\/tests\/test_cart\.py/,
  },
];

const JAVASCRIPT: Layout[] = [
  {
    name: 'package.json main',
    base: {
      'package.json': '{"name": "shop", "type": "module", "main": "lib/index.js"}\n',
      'lib/index.js': JS_CODE_ESM,
      'test/index.test.js': JS_TEST_ESM('../lib/index.js'),
    },
    product: 'lib/index.js',
    test: 'test/index.test.js',
    because: /./,
  },
  {
    name: 'package.json exports, imported by its own name',
    base: {
      'package.json': '{"name": "shop", "type": "module", "exports": {".": "./src/index.js"}}\n',
      'src/index.js': JS_CODE_ESM,
      'test/index.test.js': JS_TEST_ESM('shop'),
    },
    product: 'src/index.js',
    test: 'test/index.test.js',
    because: /./,
  },
  {
    name: 'package.json bin',
    base: {
      'package.json': '{"name": "shop", "type": "module", "bin": {"shop": "bin/shop.js"}}\n',
      'bin/shop.js': JS_CODE_ESM,
      'test/shop.test.js': JS_TEST_ESM('../bin/shop.js'),
    },
    product: 'bin/shop.js',
    test: 'test/shop.test.js',
    because: /./,
  },
  {
    name: 'no manifest fields: code in app/',
    base: {
      'package.json': '{"name": "shop", "type": "module", "scripts": {"test": "node --test"}}\n',
      'app/cart.js': JS_CODE_ESM,
      'test/cart.test.js': JS_TEST_ESM('../app/cart.js'),
    },
    product: 'app/cart.js',
    test: 'test/cart.test.js',
    because: /imported by test\/cart\.test\.js/,
  },
  {
    name: 'no manifest fields: CommonJS in server/, required without extension',
    base: {
      'package.json': '{"name": "shop", "scripts": {"test": "node --test"}}\n',
      'server/cart.js': 'exports.total = (values) => values.reduce((a, b) => a + b, 0);\n',
      'test/cart.test.js':
        "const test = require('node:test');\nconst assert = require('node:assert');\nconst { total } = require('../server/cart');\ntest('total', () => assert.equal(total([1, 2]), 3));\n",
    },
    product: 'server/cart.js',
    test: 'test/cart.test.js',
    because: /imported by test\/cart\.test\.js/,
  },
  {
    name: 'root files beside index.js, tests beside the code',
    base: {
      'package.json': '{"name": "shop", "type": "module"}\n',
      'index.js': "export * from './cart.js';\n",
      'cart.js': JS_CODE_ESM,
      'cart.test.js': JS_TEST_ESM('./cart.js'),
    },
    product: 'cart.js',
    test: 'cart.test.js',
    because: /./,
  },
  {
    name: 'TypeScript source imported without extension',
    base: {
      'package.json': '{"name": "shop", "type": "module", "scripts": {"test": "vitest run"}}\n',
      'src/cart.ts':
        'export function total(values: number[]): number {\n  return values.reduce((a, b) => a + b, 0);\n}\n',
      'tests/cart.test.ts':
        "import { expect, test } from 'vitest';\nimport { total } from '../src/cart';\ntest('total', () => expect(total([1, 2])).toBe(3));\n",
    },
    product: 'src/cart.ts',
    test: 'tests/cart.test.ts',
    because: /./,
  },
];

const PRICE_TEST = (from: string) =>
  `import { expect, test } from 'vitest';\nimport { total } from '${from}';\ntest('total', () => expect(total([1, 2])).toBe(3));\n`;

const ALIASES: Layout[] = [
  {
    name: 'tsconfig paths in an extended tsconfig',
    base: {
      'package.json': '{"name": "shop", "type": "module"}\n',
      'tsconfig.base.json':
        '{ "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["app/*"] } } }\n',
      'tsconfig.json': '{ "extends": "./tsconfig.base.json" }\n',
      'app/cart.ts': JS_CODE_ESM,
      'test/cart.test.ts': PRICE_TEST('@/cart'),
    },
    product: 'app/cart.ts',
    test: 'test/cart.test.ts',
    because: /imported by test\/cart\.test\.ts/,
  },
  {
    name: 'vitest resolve.alias',
    base: {
      'package.json': '{"name": "shop", "type": "module"}\n',
      'vitest.config.js':
        "import path from 'node:path';\nexport default { resolve: { alias: { '~': path.resolve(__dirname, 'app') } } };\n",
      'app/cart.ts': JS_CODE_ESM,
      'test/cart.test.ts': PRICE_TEST('~/cart'),
    },
    product: 'app/cart.ts',
    test: 'test/cart.test.ts',
    because: /imported by test\/cart\.test\.ts/,
  },
  {
    name: 'jest moduleNameMapper in package.json',
    base: {
      'package.json': JSON.stringify({
        name: 'shop',
        jest: { moduleNameMapper: { '^@/(.*)$': '<rootDir>/app/$1' } },
      }),
      'app/cart.js': 'exports.total = (values) => values.reduce((a, b) => a + b, 0);\n',
      'test/cart.test.js':
        "const { total } = require('@/cart');\ntest('total', () => expect(total([1, 2])).toBe(3));\n",
    },
    product: 'app/cart.js',
    test: 'test/cart.test.js',
    because: /imported by test\/cart\.test\.js/,
  },
  {
    name: 'npm workspaces: a package imported by its name from another workspace',
    base: {
      'package.json': '{"name": "root", "private": true, "workspaces": ["packages/*"]}\n',
      'packages/core/package.json': '{"name": "@acme/core", "type": "module"}\n',
      'packages/core/index.js': JS_CODE_ESM,
      'packages/app/package.json': '{"name": "@acme/app", "type": "module"}\n',
      'packages/app/test/total.test.js': JS_TEST_ESM('@acme/core'),
    },
    product: 'packages/core/index.js',
    test: 'packages/app/test/total.test.js',
    because: /./,
  },
];

const RUST: Layout[] = [
  {
    name: 'single crate with an integration test',
    base: {
      'Cargo.toml': '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2021"\n',
      'src/lib.rs': 'pub fn total(values: &[i32]) -> i32 {\n    values.iter().sum()\n}\n',
      'tests/total.rs': '#[test]\nfn total() {\n    assert_eq!(shop::total(&[1, 2]), 3);\n}\n',
    },
    product: 'src/lib.rs',
    test: 'tests/total.rs',
    because: /./,
  },
  {
    name: 'workspace member',
    base: {
      'Cargo.toml': '[workspace]\nmembers = ["crates/shop"]\n',
      'crates/shop/Cargo.toml': '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2021"\n',
      'crates/shop/src/lib.rs':
        'pub fn total(values: &[i32]) -> i32 {\n    values.iter().sum()\n}\n',
      'crates/shop/tests/total.rs':
        '#[test]\nfn total() {\n    assert_eq!(shop::total(&[1, 2]), 3);\n}\n',
    },
    product: 'crates/shop/src/lib.rs',
    test: 'crates/shop/tests/total.rs',
    because: /./,
  },
];

const repos: TempRepo[] = [];
afterAll(() => repos.forEach((repo) => repo.remove()));

/** The Player's change to a file: a line the language ignores, so only the path matters. */
function edited(file: string, content: string): string {
  return `${content}${/\.py$/.test(file) ? '# changed\n' : '// changed\n'}`;
}

const GO_MOD = 'module example.com/shop\n\ngo 1.19\n';
const goCode = (pkg: string) =>
  `package ${pkg}\n\nfunc Total(values []int) (sum int) {\n\tfor _, v := range values {\n\t\tsum += v\n\t}\n\treturn\n}\n`;
const goTest = (pkg: string, imports = '', call = 'Total') =>
  `package ${pkg}\n\nimport (\n\t"testing"\n${imports})\n\nfunc TestTotal(t *testing.T) {\n\tif ${call}([]int{1, 2}) != 3 {\n\t\tt.Fatal("total")\n\t}\n}\n`;

const GO: Layout[] = [
  {
    name: 'a package at the module root',
    base: { 'go.mod': GO_MOD, 'shop.go': goCode('shop'), 'shop_test.go': goTest('shop') },
    product: 'shop.go',
    test: 'shop_test.go',
    because: /go: \.\/ \(go\.mod\)/,
  },
  {
    name: 'a nested package tested from an external _test package',
    base: {
      'go.mod': GO_MOD,
      'cart/total.go': goCode('cart'),
      'cart/total_test.go': goTest('cart_test', '\t"example.com/shop/cart"\n', 'cart.Total'),
    },
    product: 'cart/total.go',
    test: 'cart/total_test.go',
    because: /./,
  },
  {
    name: 'an internal/ package',
    base: {
      'go.mod': GO_MOD,
      'internal/sum/total.go': goCode('sum'),
      'internal/sum/total_test.go': goTest('sum'),
    },
    product: 'internal/sum/total.go',
    test: 'internal/sum/total_test.go',
    because: /./,
  },
  {
    name: 'a module in a subfolder of a monorepo',
    base: {
      'services/shop/go.mod': GO_MOD,
      'services/shop/shop.go': goCode('shop'),
      'services/shop/shop_test.go': goTest('shop'),
    },
    product: 'services/shop/shop.go',
    test: 'services/shop/shop_test.go',
    because: /go: services\/shop\/ \(go\.mod\)/,
  },
];

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
    const all = { 'go.mod': GO_MOD, 'shop.go': goCode('shop'), ...files };
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
