import { describe, expect, it } from 'vitest';
import { manifestPaths, productCode } from '../../src/scope/product-code-rules.js';
import { withTestBlocksOf } from '../../src/scope/rust-test-blocks.js';

/** The base tree (file list, manifests' content) decides what the trusted runs take from the Player. */
function code(files: Record<string, string>) {
  const list = Object.keys(files);
  const manifests = new Map(manifestPaths(list).map((file) => [file, files[file]!]));
  return productCode(list, manifests);
}

describe('productCode', () => {
  it('Python src layout: the packages under src/, never tests, conftest or test modules', () => {
    const product = code({
      'pyproject.toml': '[project]\nname = "shop"\n',
      'src/shop/__init__.py': '',
      'src/shop/cart.py': '',
      'tests/test_cart.py': '',
      'conftest.py': '',
    });
    expect(product.roots).toEqual(['python: src/ (src layout)']);
    expect(product.isProductCode('src/shop/cart.py')).toBe(true);
    expect(product.isProductCode('src/shop/new_module.py')).toBe(true);
    for (const file of [
      'src/shop/conftest.py',
      'src/shop/test_cart.py',
      'src/shop/tests/helpers.py',
      'src/shop/data/rates.json',
      'src/shop/.hidden.py',
      'tests/test_cart.py',
      'conftest.py',
      'pyproject.toml',
      'pytest.toml',
      'sitecustomize.py',
    ])
      expect(product.isProductCode(file), file).toBe(false);
  });

  it('Python flat layout: top-level modules and packages, as setuptools discovers them', () => {
    const product = code({
      'pyproject.toml': '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n',
      'calc.py': '',
      'pkg/__init__.py': '',
      'pkg/core.py': '',
      'scripts/release.py': '',
      'noxfile.py': '',
      'tests/test_calc.py': '',
    });
    expect(product.isProductCode('calc.py')).toBe(true);
    expect(product.isProductCode('pkg/core.py')).toBe(true);
    // A new top-level module is not a base package or module: its role is unclear, so it is not code.
    expect(product.isProductCode('helpers_for_tests.py')).toBe(false);
    expect(product.isProductCode('scripts/release.py')).toBe(false);
    expect(product.isProductCode('noxfile.py')).toBe(false);
  });

  it('Python declared packages: setuptools package-dir and packages, setup.cfg, poetry', () => {
    expect(
      code({
        'pyproject.toml': '[tool.setuptools]\npackages = ["app"]\npackage-dir = {"" = "lib"}\n',
        'lib/app/__init__.py': '',
        'lib/other/__init__.py': '',
      }).roots,
    ).toEqual(['python: lib/app/ (pyproject.toml)']);
    expect(
      code({
        'setup.cfg': '[options]\npackage_dir =\n    =source\npackages = find:\n',
        'source/app/__init__.py': '',
      }).isProductCode('source/app/x.py'),
    ).toBe(true);
    expect(
      code({
        'pyproject.toml': '[tool.poetry]\npackages = [{ include = "app", from = "src" }]\n',
        'src/app/__init__.py': '',
      }).roots,
    ).toEqual(['python: src/app/ (pyproject.toml)']);
  });

  it('JS/TS: what package.json exports and builds, tsconfig sources, never tests or configs', () => {
    const product = code({
      'package.json': JSON.stringify({
        main: './dist/index.js',
        exports: { '.': './dist/index.js' },
        bin: { cli: 'bin/cli.js' },
      }),
      'tsconfig.json': '{ // comments are allowed\n "include": ["src/**/*"] }',
      'src/index.ts': '',
      'bin/cli.js': '',
      'test/index.test.ts': '',
    });
    expect(product.isProductCode('src/index.ts')).toBe(true);
    expect(product.isProductCode('src/util/new.ts')).toBe(true);
    expect(product.isProductCode('bin/cli.js')).toBe(true);
    for (const file of [
      'src/foo.test.ts',
      'src/__tests__/a.ts',
      'src/__snapshots__/a.ts.snap',
      'src/vitest.setup.ts',
      'src/data.json',
      'vitest.config.ts',
      'vitest.config.mts',
      'test/helpers.ts',
      '.mocharc.js',
      'package.json',
    ])
      expect(product.isProductCode(file), file).toBe(false);
  });

  it('JS with no entry fields: src/ and lib/ by convention; a monorepo package in a subfolder', () => {
    const product = code({
      'package.json': '{"private": true}',
      'src/lib.js': '',
      'packages/core/package.json': '{"main": "lib/index.js"}',
      'packages/core/lib/index.js': '',
    });
    expect(product.isProductCode('src/lib.js')).toBe(true);
    expect(product.isProductCode('packages/core/lib/index.js')).toBe(true);
    expect(product.isProductCode('packages/core/jest.config.js')).toBe(false);
  });

  it('Rust: the crate src/, not tests/ or benches; Go: packages without _test.go and testdata', () => {
    const rust = code({ 'Cargo.toml': '[package]\nname = "calc"\n', 'src/lib.rs': '' });
    expect(rust.isProductCode('src/lib.rs')).toBe(true);
    expect(rust.isProductCode('tests/it.rs')).toBe(false);
    expect(rust.isProductCode('build.rs')).toBe(false);
    const go = code({ 'go.mod': 'module x\n', 'calc.go': '' });
    expect(go.isProductCode('calc.go')).toBe(true);
    expect(go.isProductCode('calc_test.go')).toBe(false);
    expect(go.isProductCode('testdata/in.go')).toBe(false);
  });

  it('an unknown layout has no product code', () => {
    const product = code({ Makefile: 'test:\n\t./run-tests\n', 'main.c': '', 'run-tests': '' });
    expect(product.roots).toEqual([]);
    expect(product.isProductCode('main.c')).toBe(false);
  });
});

describe('withTestBlocksOf', () => {
  const BASE = [
    'pub fn add(a: i32, b: i32) -> i32 { a + b }',
    '',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::*;',
    '    #[test]',
    '    fn adds() { assert_eq!(add(2, 3), 5); let _s = "}"; let _c = \'}\'; }',
    '}',
    '',
  ].join('\n');

  it("keeps the Player's code and puts the base's in-source tests back", () => {
    const player = BASE.replace('a + b', 'a - b').replace(
      'assert_eq!(add(2, 3), 5)',
      'assert!(true)',
    );
    const result = withTestBlocksOf(player, BASE);
    expect(result).toContain('a - b');
    expect(result).toContain('assert_eq!(add(2, 3), 5)');
    expect(result).not.toContain('assert!(true)');
  });

  it("drops a new file's in-source tests and keeps items after a test module", () => {
    const player = `#[cfg(test)]\nmod t { #[test] fn x() {} }\n\npub fn after<'a>(s: &'a str) -> &'a str { s }\n`;
    const result = withTestBlocksOf(player, undefined);
    expect(result).not.toContain('mod t');
    expect(result).toContain("pub fn after<'a>");
  });

  it('reads attributes, comments and raw strings: cfg(not(test)) stays, a stacked test item goes', () => {
    const player = [
      '#[cfg(not(test))]',
      'pub fn real() -> &\'static str { r#"}"# } // a brace } in a comment',
      '#[cfg(all(test, feature = "x"))]',
      '#[allow(unused)]',
      'const FIXTURE: &str = "{";',
      '/* nested /* } */ comment */ pub fn kept() {}',
      '',
    ].join('\n');
    const result = withTestBlocksOf(player, undefined);
    expect(result).toContain('pub fn real()');
    expect(result).not.toContain('FIXTURE');
    expect(result).toContain('pub fn kept() {}');
  });

  const NESTED_BASE = [
    'pub mod inner {',
    '    pub fn one() -> i32 { 1 }',
    '',
    '    #[cfg(test)]',
    '    mod tests {',
    '        #[test]',
    '        fn is_one() { assert_eq!(super::one(), 1); }',
    '    }',
    '}',
    '',
    '#[cfg(all(test, unix))]',
    'mod unix_tests {',
    '    #[test]',
    '    fn still_one() { assert_eq!(crate::inner::one(), 1); }',
    '}',
    '',
  ].join('\n');

  it("puts a test module nested in an inline module back into that module, over the Player's", () => {
    const player = NESTED_BASE.replace('{ 1 }', '{ 2 }').replace(
      'assert_eq!(super::one(), 1)',
      'assert!(true)',
    );
    const result = withTestBlocksOf(player, NESTED_BASE);
    expect(result).toContain('pub fn one() -> i32 { 2 }');
    expect(result).not.toContain('assert!(true)');
    const inner = result.slice(result.indexOf('pub mod inner {'), result.indexOf('#[cfg(all'));
    expect(inner).toMatch(/mod tests \{[\s\S]*assert_eq!\(super::one\(\), 1\)[\s\S]*\}\s*\}\s*$/);
    expect(result.match(/mod tests/g)).toHaveLength(1);
  });

  it('takes #[cfg(all(test, …))] items from the base, at the top level and nested', () => {
    const nested = NESTED_BASE.replace(
      '    #[cfg(test)]\n    mod tests',
      '    #[cfg(all(test, unix))]\n    mod tests',
    );
    const player = nested
      .replace('assert_eq!(super::one(), 1)', 'assert!(true)')
      .replace('assert_eq!(crate::inner::one(), 1)', 'assert!(1 == 1)');
    const result = withTestBlocksOf(player, nested);
    expect(result).not.toContain('assert!(true)');
    expect(result).not.toContain('assert!(1 == 1)');
    expect(result).toContain('assert_eq!(super::one(), 1)');
    expect(result).toContain('assert_eq!(crate::inner::one(), 1)');
    expect(result.match(/#\[cfg\(all\(test, unix\)\)\]/g)).toHaveLength(2);
  });

  it('re-creates the module a nested base test lived in when the Player removed it', () => {
    const player = NESTED_BASE.slice(NESTED_BASE.indexOf('#[cfg(all'));
    const result = withTestBlocksOf(player, NESTED_BASE);
    expect(result).toMatch(/mod inner \{\s*#\[cfg\(test\)\]\s*mod tests \{[\s\S]*is_one/);
  });

  it('swaps #[test] functions outside a cfg(test) module; a "test-utils" feature item is code', () => {
    const base = [
      'pub fn two() -> [u8; 2] { [1, 2] }',
      '#[cfg(test)]',
      'fn fixture() -> [u8; 2] { [1, 2] }',
      'mod checks {',
      '    #[test]',
      '    fn two_is_one_two() { assert_eq!(super::two(), super::fixture()); }',
      '}',
      '#[cfg(feature = "test-utils")]',
      'pub fn helper() -> u8 { 1 }',
      '',
    ].join('\n');
    const player = base
      .replace('fn fixture() -> [u8; 2] { [1, 2] }', 'fn fixture() -> [u8; 2] { [9, 9] }')
      .replace('assert_eq!(super::two(), super::fixture())', 'assert!(true)')
      .replace('{ 1 }', '{ 7 }');
    const result = withTestBlocksOf(player, base);
    expect(result).toContain('fn fixture() -> [u8; 2] { [1, 2] }');
    expect(result).not.toContain('[9, 9]');
    expect(result).toMatch(/mod checks \{\s*#\[test\]\s*fn two_is_one_two\(\) \{ assert_eq!/);
    expect(result).not.toContain('assert!(true)');
    expect(result).toContain('pub fn helper() -> u8 { 7 }');
  });
});
