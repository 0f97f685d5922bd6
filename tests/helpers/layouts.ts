/**
 * The layout table of docs/default-deny.md as data: per ecosystem, real repository layouts whose
 * product file defines `total` and whose base test checks `total([1, 2])` is 3. The selection test
 * (tests/selection/layout-table.test.ts) checks what each cell takes; the MCP test
 * (tests/evaluation/layout-table-mcp.test.ts) approves an honest change on it and refuses the tactic.
 */
export interface Layout {
  name: string;
  base: Record<string, string>;
  product: string;
  test: string;
  /** Part of the reason the selection gives for the product file. */
  because: RegExp;
}

export const PY_TEST = (module: string) =>
  `from ${module} import total\n\ndef test_total():\n    assert total([1, 2]) == 3\n`;
export const PY_CODE = 'def total(values):\n    return sum(values)\n';
const JS_TEST_ESM = (from: string) =>
  `import { test } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { total } from '${from}';\ntest('total', () => assert.equal(total([1, 2]), 3));\n`;
const JS_CODE_ESM =
  'export function total(values) {\n  return values.reduce((a, b) => a + b, 0);\n}\n';
export const pyproject = (body: string) => `[project]\nname = "shop"\nversion = "1.0"\n${body}`;

export const PYTHON: Layout[] = [
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

export const JAVASCRIPT: Layout[] = [
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

export const ALIASES: Layout[] = [
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

export const RUST: Layout[] = [
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

export const GO_MOD = 'module example.com/shop\n\ngo 1.19\n';
export const goCode = (pkg: string) =>
  `package ${pkg}\n\nfunc Total(values []int) (sum int) {\n\tfor _, v := range values {\n\t\tsum += v\n\t}\n\treturn\n}\n`;
export const goTest = (pkg: string, imports = '', call = 'Total') =>
  `package ${pkg}\n\nimport (\n\t"testing"\n${imports})\n\nfunc TestTotal(t *testing.T) {\n\tif ${call}([]int{1, 2}) != 3 {\n\t\tt.Fatal("total")\n\t}\n}\n`;

export const GO: Layout[] = [
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
