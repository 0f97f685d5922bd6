import path from 'node:path';
import { isJsFile, isTestFile, isTestSideFile } from './test-paths.js';

/**
 * Code under test: the repository files the base's tests reach by their imports, minus test support.
 * Manifests are one source of what the Player's code is (src/scope/product-code-rules.ts); this is the other,
 * and the one that holds where no manifest says anything (a Python app with only a pytest.ini, a JS
 * app with its code in app/).
 */

/** One import statement: `import a.b` is `{module: 'a.b', names: []}`; `from . import x` has level 1. */
export interface PythonImport {
  module: string;
  /** Leading dots of a relative import. */
  level: number;
  /** Names after `from … import` (they may be submodules); empty for `import a.b`. */
  names: string[];
}

/** What a file's imports are resolved against. */
export interface ImportIndex {
  files: ReadonlySet<string>;
  /** Every directory that holds a file (namespace packages have no `__init__.py`). */
  directories: ReadonlySet<string>;
  /** Directories absolute Python imports start from ('' is the repository root). */
  pythonRoots: readonly string[];
  /** JS packages of the repository by name (self-references, workspaces): directory and entry files. */
  jsPackages: ReadonlyMap<string, { directory: string; entries: string[] }>;
  /** Module aliases of the runner and compiler configs, most specific scope first; none if absent. */
  aliases?: readonly ImportAlias[];
  /** Go modules of the repository by module path (from each go.mod): their directories. */
  goModules?: ReadonlyMap<string, string>;
}

/**
 * One module alias (tsconfig `paths`, vite/vitest `resolve.alias`, jest `moduleNameMapper`): a
 * specifier `find` matches, imported from a file under `scope`, names `specifier.replace(find,
 * replacement)`, a repository-relative path.
 */
export interface ImportAlias {
  /** The config's directory ('' is the repository root): the alias holds for files below it. */
  scope: string;
  find: RegExp;
  replacement: string;
}

/** The imports of one file, as its language's reader found them. */
export type FileImports = (
  | { language: 'python'; imports: PythonImport[] }
  | { language: 'javascript'; specifiers: string[] }
  | { language: 'go'; packages: string[] }
) & {
  /** It can decide a test without a test framework (src/analysis/assertion-helper.ts). */
  assertionHelper?: boolean;
};

/** Repository files one file's imports name (existing files only; packages' `__init__.py` included). */
export function resolveImports(file: string, found: FileImports, index: ImportIndex): string[] {
  const resolved =
    found.language === 'python'
      ? found.imports.flatMap((item) => resolvePython(file, item, index))
      : found.language === 'go'
        ? resolveGo(file, found.packages, index)
        : found.specifiers.flatMap((specifier) => resolveJavascript(file, specifier, index));
  return [...new Set(resolved)].filter((target) => target !== file);
}

function resolvePython(file: string, item: PythonImport, index: ImportIndex): string[] {
  const modulePath = item.module.split('.').filter(Boolean);
  // pytest puts a test file's directory (and its rootdir) on sys.path; product code imports from
  // the configured roots only.
  const bases =
    item.level > 0
      ? [ancestor(path.posix.dirname(file), item.level - 1)]
      : [
          ...index.pythonRoots,
          ...(isTestSideFile(file) || isTestFile(file) ? ancestors(path.posix.dirname(file)) : []),
        ];
  const found: string[] = [];
  for (const base of new Set(bases)) {
    if (base === undefined) continue;
    const hits = [
      ...packageChain(base, modulePath, index),
      ...item.names.flatMap((name) => moduleFiles(join(base, [...modulePath, name]), index)),
    ];
    found.push(...hits);
  }
  return found;
}

/** `a/__init__.py`, `a/b/__init__.py` and `a/b/c.py` (or `a/b/c/__init__.py`) under `base`. */
function packageChain(base: string, modulePath: string[], index: ImportIndex): string[] {
  if (modulePath.length === 0) return [initOf(base)].filter((name) => index.files.has(name));
  const found: string[] = [];
  for (let depth = 1; depth <= modulePath.length; depth += 1) {
    const stem = join(base, modulePath.slice(0, depth));
    const files = moduleFiles(stem, index);
    // A namespace package (no __init__.py) still holds its modules; anything else ends the chain.
    if (files.length === 0 && !index.directories.has(stem)) return found;
    found.push(...files);
  }
  return found;
}

function moduleFiles(stem: string, index: ImportIndex): string[] {
  return [`${stem}.py`, initOf(stem)].filter((name) => index.files.has(name));
}

function initOf(directory: string): string {
  return join(directory, ['__init__.py']);
}

function join(base: string, parts: string[]): string {
  return [base, ...parts].filter(Boolean).join('/');
}

/** `directory` and every directory above it, up to the repository root (''). */
function ancestors(directory: string): string[] {
  const list: string[] = [];
  let current = directory === '.' ? '' : directory;
  for (;;) {
    list.push(current);
    if (current === '') return list;
    const parent = path.posix.dirname(current);
    current = parent === '.' ? '' : parent;
  }
}

function ancestor(directory: string, levels: number): string | undefined {
  return ancestors(directory)[levels];
}

const JS_EXTENSIONS = ['.ts', '.tsx', '.mts', '.cts', '.js', '.jsx', '.mjs', '.cjs'];
/** TypeScript sources are imported under the name of their output (`./x.js` is `x.ts`). */
const OUTPUT_TO_SOURCE: Record<string, string[]> = {
  '.js': ['.ts', '.tsx'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts'],
  '.cjs': ['.cts'],
};

function resolveJavascript(file: string, specifier: string, index: ImportIndex): string[] {
  if (specifier.startsWith('.'))
    return jsFile(path.posix.join(path.posix.dirname(file), specifier), index);
  const aliased = resolveAlias(file, specifier, index);
  if (aliased.length > 0) return aliased;
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  const found = index.jsPackages.get(name);
  if (!found) return [];
  const subpath = specifier.slice(name.length + 1);
  if (subpath) return jsFile(join(found.directory, [subpath]), index);
  return found.entries.flatMap((entry) => jsFile(join(found.directory, [entry]), index));
}

/** The file the first alias that holds for `file` and matches `specifier` names, if it exists. */
function resolveAlias(file: string, specifier: string, index: ImportIndex): string[] {
  for (const alias of index.aliases ?? []) {
    if (alias.scope !== '' && !file.startsWith(`${alias.scope}/`)) continue;
    if (!alias.find.test(specifier)) continue;
    const hit = jsFile(specifier.replace(alias.find, alias.replacement), index);
    if (hit.length > 0) return hit;
  }
  return [];
}

/**
 * The file a relative or package specifier loads, as Node resolves it: the file, with an extension,
 * then the directory (`require('..')`, `require('./lib')`): its package.json's entries, else its
 * index file.
 */
function jsFile(target: string, index: ImportIndex): string[] {
  const clean = path.posix.normalize(target).replace(/^\.(?:\/|$)/, '');
  if (clean.startsWith('..')) return [];
  const extension = path.posix.extname(clean);
  const stem = clean.slice(0, clean.length - extension.length);
  const candidates = [
    ...(clean === '' ? [] : [clean]),
    ...(OUTPUT_TO_SOURCE[extension] ?? []).map((source) => `${stem}${source}`),
    ...JS_EXTENSIONS.map((ext) => `${clean}${ext}`),
  ];
  const hit = candidates.find((name) => index.files.has(name) && isJsFile(name));
  if (hit) return [hit];
  const manifest = [...index.jsPackages.values()].find((item) => item.directory === clean);
  const entries = (manifest?.entries ?? [])
    .map((entry) => join(clean, [entry]))
    .map((entry) => path.posix.normalize(entry).replace(/^\.\//, ''))
    .filter((entry) => entry !== clean && !entry.startsWith('..'));
  const inDirectory = [
    ...entries.flatMap((entry) => [entry, ...JS_EXTENSIONS.map((ext) => `${entry}${ext}`)]),
    ...JS_EXTENSIONS.map((ext) => join(clean, [`index${ext}`])),
  ];
  const found = inDirectory.find((name) => index.files.has(name) && isJsFile(name));
  return found ? [found] : [];
}

/**
 * The files of the repository's Go packages that `file` imports, by the longest module path that
 * names each, and for a `_test.go` file the package it tests (its own directory): a package is all
 * of its directory's non-test Go files, which go compiles together.
 */
function resolveGo(file: string, packages: readonly string[], index: ImportIndex): string[] {
  const directories = packages.flatMap((importPath) => {
    const module = goModuleOf(importPath, index);
    return module ? [join(module.directory, [importPath.slice(module.path.length + 1)])] : [];
  });
  if (isTestFile(file)) directories.push(directoryOf(file));
  const byDirectory = goPackagesOf(index);
  return directories.flatMap((directory) => byDirectory.get(directory) ?? []);
}

/** The index's Go packages by directory, grouped once per index (a walk resolves many imports). */
const goPackagesByIndex = new WeakMap<ImportIndex, Map<string, string[]>>();
function goPackagesOf(index: ImportIndex): Map<string, string[]> {
  let packages = goPackagesByIndex.get(index);
  if (!packages) {
    packages = new Map();
    for (const file of index.files) {
      if (importLanguage(file) !== 'go' || isTestFile(file)) continue;
      const directory = directoryOf(file);
      const members = packages.get(directory);
      if (members) members.push(file);
      else packages.set(directory, [file]);
    }
    goPackagesByIndex.set(index, packages);
  }
  return packages;
}

/** The repository's Go module that holds `importPath` (the longest module path), if any. */
function goModuleOf(
  importPath: string,
  index: ImportIndex | undefined,
): { path: string; directory: string } | undefined {
  const found = [...(index?.goModules ?? [])]
    .filter(([name]) => importPath === name || importPath.startsWith(`${name}/`))
    .sort(([a], [b]) => b.length - a.length)[0];
  return found && { path: found[0], directory: found[1] };
}

/** The non-test Go files of the package in `directory` ('' is the root), among `files`. */
export function goPackage(directory: string, files: Iterable<string>): string[] {
  return [...files].filter(
    (file) => importLanguage(file) === 'go' && !isTestFile(file) && directoryOf(file) === directory,
  );
}

/** A file's directory, repository-relative ('' is the root). */
export function directoryOf(file: string): string {
  const directory = path.posix.dirname(file);
  return directory === '.' ? '' : directory;
}

/** Modules only tests import: a file that loads one of these is test support, wherever it lives. */
const PYTHON_TEST_FRAMEWORKS = new Set(['pytest', '_pytest', 'unittest', 'hypothesis', 'nose']);
const GO_TEST_FRAMEWORKS =
  /^(?:testing(?:\/.+)?|github\.com\/(?:stretchr\/testify|onsi\/(?:ginkgo|gomega)|matryer\/is|frankban\/quicktest)(?:\/.+)?|gotest\.tools(?:\/.+)?)$/;
const JS_TEST_FRAMEWORKS =
  /^(?:vitest|@vitest\/.+|jest|@jest\/globals|mocha|chai|sinon|node:test|ava|uvu|tap|tape|expect|@testing-library\/.+|supertest)$/;

/**
 * Whether a file's own imports make it test support (a test helper, a fixture module). A Go import
 * of one of the repository's own modules never does: testify's packages import each other.
 */
export function importsTestFramework(found: FileImports, index?: ImportIndex): boolean {
  switch (found.language) {
    case 'python':
      return found.imports.some(
        (item) => item.level === 0 && PYTHON_TEST_FRAMEWORKS.has(item.module.split('.')[0]!),
      );
    case 'go':
      return found.packages.some(
        (importPath) => GO_TEST_FRAMEWORKS.test(importPath) && !goModuleOf(importPath, index),
      );
    case 'javascript':
      return found.specifiers.some((specifier) => JS_TEST_FRAMEWORKS.test(specifier));
  }
}

/** Source files whose imports are followed. */
export function importLanguage(file: string): FileImports['language'] | undefined {
  if (file.endsWith('.py')) return 'python';
  if (isJsFile(file) && !file.endsWith('.d.ts')) return 'javascript';
  if (file.endsWith('.go') && !isIgnoredByGo(file)) return 'go';
  return undefined;
}

/** The go tool skips `testdata/`, `vendor/` and directories named with a leading `_` or `.`. */
export function isIgnoredByGo(file: string): boolean {
  return file
    .split('/')
    .slice(0, -1)
    .some((part) => part === 'testdata' || part === 'vendor' || /^[_.]/.test(part));
}

/** The outcome of following the base's tests through their imports. */
export interface CodeUnderTest {
  /** Files the tests reach that are not test support, each with why. */
  code: Map<string, string>;
  /** Files the tests reach that are test support (they import a test framework), with why. */
  support: Map<string, string>;
  /** Files of `code` that are assertion helpers: test support where no product code uses them. */
  assertionHelpers: Set<string>;
}

/**
 * Follows imports from `tests` through the repository, breadth first, reading each wave of files at
 * once with `read` (missing or unreadable files are skipped). A file the walk reaches is code under
 * test unless it is test-side by its path or imports a test framework; the walk goes on through test
 * support too (a helper may import the product).
 */
export async function followImports(
  tests: readonly string[],
  index: ImportIndex,
  read: (files: string[]) => Promise<Map<string, string>>,
  parse: (file: string, text: string) => FileImports | undefined,
): Promise<CodeUnderTest> {
  const result: CodeUnderTest = {
    code: new Map(),
    support: new Map(),
    assertionHelpers: new Set(),
  };
  const seen = new Set<string>(tests);
  let wave: Step[] = tests.map((file) => ({ file, importer: file, test: file }));
  while (wave.length > 0) {
    const texts = await read(wave.map((item) => item.file));
    const next: Step[] = [];
    for (const step of wave) {
      const text = texts.get(step.file);
      const found = text === undefined ? undefined : parse(step.file, text);
      if (!found) continue;
      const isStart = step.importer === step.file;
      if (!isStart) {
        const support =
          isTestSideFile(step.file) || isTestFile(step.file) || importsTestFramework(found, index);
        (support ? result.support : result.code).set(step.file, reasonOf(step));
        if (!support && found.assertionHelper) result.assertionHelpers.add(step.file);
      }
      for (const target of resolveImports(step.file, found, index)) {
        if (seen.has(target)) continue;
        seen.add(target);
        next.push({ file: target, importer: step.file, test: step.test });
      }
    }
    wave = next;
  }
  return result;
}

interface Step {
  file: string;
  /** The file whose import reached this one (the file itself for a test the walk starts from). */
  importer: string;
  test: string;
}

function reasonOf(step: Step): string {
  return step.importer === step.test
    ? `imported by ${step.test}`
    : `imported by ${step.importer}, reached from ${step.test}`;
}
