import { lstatSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { rustTestModules } from '../analysis/rust-test-modules.js';
import { loadTypeScript } from '../analysis/typescript-parser.js';
import { directoryOf, goPackage, importLanguage, type CodeUnderTest } from './import-reach.js';
import { isFixtureOnlyConftest } from './fixture-conftest.js';
import { isRunnerConfig, runnerSetupFiles } from './runner-setup-files.js';
import {
  isOutsideSource,
  manifestPaths,
  productCode,
  type ProductCode,
} from './product-code-rules.js';
import { isTestConfigFile, isTestFile, isTestSideFile } from './test-paths.js';
import {
  changedSince,
  listAtCommit,
  listWorkingFiles,
  readAtCommit,
  readManyAtCommit,
} from '../repo/git.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import { baseCodeUnderTest, baseReachFrom, worktreeCodeUnderTest } from './code-under-test.js';
import { changedPytestEntryPoints, playerStartupPoints } from '../evaluation/startup-points.js';

/** A path the Player changed that the trusted runs took from the base instead. */
export interface LeftOutChange {
  file: string;
  change: 'added' | 'modified' | 'deleted';
}

/** Which of the Player's changes each trusted snapshot takes, decided by the base. */
export interface TrustedSelection {
  /** The base's product-code roots, as the Coach reads them. */
  product_roots: string[];
  /** Where Python imports the product from, repository-relative: put first on each snapshot's path. */
  python_import_roots: string[];
  /** Player changes to product code (present files are copied, deleted ones removed). */
  code: string[];
  /** Why each file in `code` counted: a manifest's root, or the test whose imports reach it. */
  taken_because: { file: string; reason: string }[];
  /**
   * Changed source files no rule took and that are not test support: when nothing at all was
   * taken, the trusted runs judged none of the Player's code (a vacuous evaluation).
   */
  unjudged_code: string[];
  /** Left-out changes the Coach acknowledged: taken from the Player like code. */
  acknowledged: string[];
  /** Left-out changes to what the base's tests use as support (never the Player's code). */
  test_support: string[];
  /** Test files (and their non-infrastructure helpers) the Player added: the new-tests run's extra. */
  new_tests: string[];
  left_out: LeftOutChange[];
  /**
   * Start-up points outside the test side that the Player added or changed
   * (src/scope/runner-setup-files.ts) and no acknowledgement covers: the Player's run ran them before
   * the tests, the trusted runs keep the base's (or none).
   */
  startup_changed: string[];
  base_files: Set<string>;
}

/** The base's code: what its manifests declare, and what its tests reach by their imports. */
export interface BaseCode extends ProductCode {
  /** Why a file is code, or undefined when it is not. */
  reasonFor(file: string): string | undefined;
  /** Test support the base's tests reach (it imports a test framework): never the Player's. */
  isTestSupport(file: string): boolean;
  /** A file the base's runner configuration loads before or around the tests. */
  isStartupPoint(file: string): boolean;
}

/** The base's test support among its product files, per base commit: walked once per server. */
const productSupportByBase = new Map<string, Promise<string[]>>();

/** The code of the base commit: its tree and manifests as committed there, and its tests' imports. */
export async function baseProductCode(
  worktree: string,
  baseCommit: string,
  baseFiles: readonly string[],
): Promise<BaseCode> {
  const manifests = new Map<string, string>();
  const [reach, setupFiles, rustTests] = await Promise.all([
    baseCodeUnderTest(worktree, baseCommit, baseFiles),
    baseSetupFiles(worktree, baseCommit, baseFiles),
    baseRustTestModules(worktree, baseCommit, baseFiles),
    ...manifestPaths(baseFiles).map(async (file) => {
      const text = await readAtCommit(worktree, baseCommit, file);
      if (text !== undefined) manifests.set(file, await asPlainJson(file, text));
    }),
  ]);
  const declared = productCode(baseFiles, manifests);
  const key = `${baseCommit}\0${path.resolve(worktree)}`;
  let productSupport = productSupportByBase.get(key);
  if (!productSupport) {
    const base = { worktree, baseCommit, baseFiles };
    productSupport = productTestSupport(base, declared, reach, [...manifests.values()]);
    // A failed read is not cached: the next approval asks git again.
    productSupport.catch(() => productSupportByBase.delete(key));
    productSupportByBase.set(key, productSupport);
  }
  const testOnly = new Set([...setupFiles, ...rustTests, ...(await productSupport)]);
  return {
    ...withReach(declared, reach, testOnly),
    isStartupPoint: (file) => setupFiles.has(file),
  };
}

/**
 * Test support among the product's files: a module the base's tests reach that imports a test
 * framework (inside a source root), or that defines an assertion helper without one (anywhere:
 * `def assert_valid(doc): assert …`, an `expect…` function over `node:assert`), that no module of
 * the product imports, that is not a package's `__init__.py` and that no manifest names (an entry
 * point such as a pytest plugin, an `exports` subpath). An assertion helper the package keeps for
 * its tests stays the base's; `click.testing` (no test framework, no `assert…` function) and
 * `numpy.testing` (imported by its package) stay code. The product's imports are walked only when
 * such a module exists.
 */
async function productTestSupport(
  base: { worktree: string; baseCommit: string; baseFiles: readonly string[] },
  declared: ProductCode,
  reach: CodeUnderTest,
  manifestTexts: string[],
): Promise<string[]> {
  // Loosely, by the file's stem as a word (`pytest_foo.plugin`, `./dist/testing.js`): a name too
  // many keeps a module code, which is the safe side.
  const named = (file: string) => {
    const stem = path.posix.basename(file).replace(/\.[^.]+$/, '');
    const word = new RegExp(`\\b${stem.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\b`);
    return manifestTexts.some((text) => word.test(text));
  };
  const supportInRoots = [...reach.support.keys()].filter(
    (file) => declared.rootOf(file) !== undefined && !isTestFile(file) && !isTestSideFile(file),
  );
  const candidates = new Set(
    [...supportInRoots, ...reach.assertionHelpers].filter(
      (file) => path.posix.basename(file) !== '__init__.py' && !named(file),
    ),
  );
  for (const file of [...candidates])
    if (importLanguage(file) === 'go') {
      candidates.delete(file);
      for (const member of goHelperPackage(file, base.baseFiles)) candidates.add(member);
    }
  if (candidates.size === 0) return [];
  // Every other source file of the base is the product's (the safe side: a script importing a
  // helper keeps it code).
  const starts = base.baseFiles.filter(
    (file) =>
      importLanguage(file) !== undefined &&
      !isOutsideSource(file) &&
      !candidates.has(file) &&
      !reach.support.has(file) &&
      !isTestFile(file) &&
      !isTestSideFile(file),
  );
  const used = await baseReachFrom(base.worktree, base.baseCommit, base.baseFiles, starts);
  return [...candidates].filter((file) => !used.has(file));
}

/**
 * The package of a Go file that imports a test framework, when it can be a helper of the tests:
 * go compiles a package's files together, so it is test support as a whole or not at all. A
 * package other modules can import (not under `internal/`) that has tests of its own is an API the
 * project ships and tests (testify's `suite`, zap's `zaptest`): code, judged by those tests.
 */
function goHelperPackage(file: string, baseFiles: readonly string[]): string[] {
  const directory = directoryOf(file);
  const internal = directory.split('/').includes('internal');
  const tested = baseFiles.some(
    (other) => other.endsWith('_test.go') && path.posix.dirname(other) === (directory || '.'),
  );
  return !internal && tested ? [] : goPackage(directory, baseFiles);
}

/** The base's Rust test modules, per base commit: the base never changes, so it is read once. */
const rustTestsByBase = new Map<string, Promise<string[]>>();

/** The base's Rust files that hold only tests (src/analysis/rust-test-modules.ts). */
function baseRustTestModules(
  worktree: string,
  baseCommit: string,
  baseFiles: readonly string[],
): Promise<string[]> {
  if (!baseFiles.some((file) => path.posix.basename(file) === 'Cargo.toml'))
    return Promise.resolve([]);
  const key = `${baseCommit}\0${path.resolve(worktree)}`;
  let found = rustTestsByBase.get(key);
  if (!found) {
    const sources = baseFiles.filter((file) => file.endsWith('.rs') && !isOutsideSource(file));
    found = readManyAtCommit(worktree, baseCommit, sources).then(rustTestModules);
    // A failed read is not cached: the next approval asks git again.
    found.catch(() => rustTestsByBase.delete(key));
    rustTestsByBase.set(key, found);
  }
  return found;
}

/** What the base's runner configuration loads around every test (src/scope/runner-setup-files.ts). */
async function baseSetupFiles(
  worktree: string,
  baseCommit: string,
  baseFiles: readonly string[],
): Promise<Set<string>> {
  const configs = baseFiles.filter((file) => !isOutsideSource(file) && isRunnerConfig(file));
  const texts = await readManyAtCommit(worktree, baseCommit, configs);
  return new Set(runnerSetupFiles(texts, new Set(baseFiles)));
}

function withReach(
  declared: ProductCode,
  reach: CodeUnderTest,
  testOnly: ReadonlySet<string>,
): Omit<BaseCode, 'isStartupPoint'> {
  // A file the runner's config loads around every test, or a Rust test module, is test support,
  // even in a source root.
  const reasonFor = (file: string) =>
    testOnly.has(file) ? undefined : (fromRoot(declared.rootOf(file)) ?? reach.code.get(file));
  return {
    roots: [...declared.roots, ...reachedRoots(declared, reach)],
    pythonImportRoots: declared.pythonImportRoots,
    isProductCode: (file) => reasonFor(file) !== undefined,
    rootOf: (file) => (testOnly.has(file) ? undefined : declared.rootOf(file)),
    reasonFor,
    isTestSupport: (file) => reach.support.has(file) || testOnly.has(file),
  };
}

function fromRoot(root: string | undefined): string | undefined {
  return root && `under ${root}`;
}

/** The reached files no manifest declares, by directory: `python: app/ (3 files the base's tests import)`. */
function reachedRoots(declared: ProductCode, reach: CodeUnderTest): string[] {
  const counts = new Map<string, number>();
  for (const file of reach.code.keys()) {
    if (declared.isProductCode(file)) continue;
    const directory = path.posix.dirname(file);
    const key = `${importLanguage(file)}: ${directory === '.' ? '.' : directory}/`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(
    ([where, count]) => `${where} (${count} file${count === 1 ? '' : 's'} the base's tests import)`,
  );
}

/** tsconfig.json is JSON with comments: read by TypeScript's own parser, loaded only when one exists. */
async function asPlainJson(file: string, text: string): Promise<string> {
  if (path.posix.basename(file) !== 'tsconfig.json') return text;
  const ts = await loadTypeScript();
  return JSON.stringify(ts.parseConfigFileTextToJson(file, text).config ?? {});
}

/**
 * Sorts every path that differs between the base and the working tree: product code (by the base's
 * rules) and acknowledged paths go to the trusted runs; everything else is left out and listed.
 */
export async function trustedSelection(
  worktree: string,
  baseCommit: string,
  acknowledgedPaths: readonly string[] = [],
): Promise<TrustedSelection> {
  const baseFiles = await listAtCommit(worktree, baseCommit, ['.']);
  const product = await baseProductCode(worktree, baseCommit, baseFiles);
  const base = new Set(baseFiles);
  const selection: TrustedSelection = {
    product_roots: product.roots,
    python_import_roots: product.pythonImportRoots,
    code: [],
    taken_because: [],
    unjudged_code: [],
    acknowledged: [],
    test_support: [],
    new_tests: [],
    left_out: [],
    startup_changed: [],
    base_files: base,
  };
  const changed = (await changedSince(worktree, baseCommit, { skipPrefix: STORE_PREFIX })).filter(
    (file) => !file.startsWith(STORE_PREFIX),
  );
  // The Player's own tree is walked only when a changed source file is not the base's code: a
  // file the Player added becomes code when its tests or its code import it.
  const undecided = changed.filter((file) => !product.isProductCode(file) && isSource(file));
  const ownReach =
    undecided.length > 0
      ? await worktreeCodeUnderTest(worktree, await listWorkingFiles(worktree))
      : undefined;
  const added = await playerStartupPoints(worktree, changed, base);
  // A manifest is test config too, but its pytest plugins load at the next install, whatever side.
  const plugins = new Set(await changedPytestEntryPoints(worktree, baseCommit, changed));
  for (const file of changed) {
    const acknowledged = acknowledgedPaths.some((entry) => coversPath(entry, file));
    // One on the test side was never the Player's in the trusted runs: left out as test support.
    const startup = product.isStartupPoint(file) || added.has(file);
    if (!acknowledged && ((startup && !isTestSideFile(file)) || plugins.has(file)))
      selection.startup_changed.push(file);
    const change = !lstatSync(path.join(worktree, file), { throwIfNoEntry: false })
      ? 'deleted'
      : base.has(file)
        ? 'modified'
        : 'added';
    const reason =
      product.reasonFor(file) ??
      (product.isTestSupport(file) ? undefined : ownReach?.code.get(file));
    if (reason !== undefined) {
      selection.code.push(file);
      selection.taken_because.push({ file, reason });
    } else if (acknowledged) selection.acknowledged.push(file);
    else {
      if (change === 'added' && (isPlayerTest(file) || (await isFixtureConftest(worktree, file))))
        selection.new_tests.push(file);
      selection.left_out.push({ file, change });
      if (product.isTestSupport(file) || ownReach?.support.has(file))
        selection.test_support.push(file);
      else if (isSource(file)) selection.unjudged_code.push(file);
    }
  }
  return selection;
}

/**
 * Words of directory names that hold documentation, examples, scripts, benchmarks or tests
 * (`docs/conf.py`, `typing-examples/`, `benchmarks/`, `typing_tests/`): code there is not what the
 * package ships, and an upstream commit that changes only it is honest work, not a vacuous one
 * (measured by scripts/bench-selection-commits.mjs). Code the tests load there is still judged
 * (unjudged_loaded), and code they import is taken.
 */
const NOT_SHIPPED = new Set([
  'doc',
  'docs',
  'example',
  'examples',
  'script',
  'scripts',
  'bench',
  'benchmark',
  'benchmarks',
  'test',
  'tests',
  'testing',
]);

/**
 * A source file that is neither a test, test support nor tooling by its path: if the Player changed
 * it, it is meant to run, and something should judge it.
 */
export function isSource(file: string): boolean {
  const name = path.posix.basename(file);
  return (
    importLanguage(file) !== undefined &&
    !isOutsideSource(file) &&
    !isTestFile(file) &&
    !isTestSideFile(file) &&
    !isTestConfigFile(file) &&
    // Test modules by the names unittest, Django and in-package suites use (tests.py, testsuite/).
    !/^(?:tests?|\w+_tests)\.py$/.test(name) &&
    !file.split('/').includes('testsuite') &&
    !file
      .split('/')
      .slice(0, -1)
      .some((directory) => directory.split(/[-_.]/).some((word) => NOT_SHIPPED.has(word))) &&
    !/[.-](?:config|setup|workspace)\.[cm]?[jt]sx?$/.test(name) &&
    !/^(?:setup|noxfile|conftest|fabfile|tasks)\.py$/.test(name)
  );
}

/** An acknowledgement names a file, or a directory (`data/` or `data`) covering the files below it. */
export function coversPath(entry: string, file: string): boolean {
  const clean = entry.replace(/^\.\//, '').replace(/\/+$/, '');
  return file === clean || file.startsWith(`${clean}/`);
}

/** A conftest.py the Player added that only gives its new tests fixtures (src/scope/fixture-conftest.ts). */
async function isFixtureConftest(worktree: string, file: string): Promise<boolean> {
  if (path.posix.basename(file) !== 'conftest.py') return false;
  const text = await readFile(path.join(worktree, file), 'utf8').catch(() => undefined);
  return text !== undefined && isFixtureOnlyConftest(text);
}

/**
 * A test or test helper the Player added, which the new-tests run may take: never test infrastructure
 * (conftest.py, setup files, runner config), which stays the base's.
 */
function isPlayerTest(file: string): boolean {
  const name = path.posix.basename(file);
  if (isTestConfigFile(file) || name === 'conftest.py') return false;
  if (/^(?:setup-?tests|(?:vitest|jest)\.setup)\./i.test(name)) return false;
  return isTestFile(file) || isTestSideFile(file);
}
