import path from 'node:path';

/** Which paths hold tests, test support and test configuration, by the usual runners' conventions. */
const JS_EXTENSION = /\.(?:[cm]?[jt]s|[jt]sx)$/;

export function isJsFile(filePath: string): boolean {
  return JS_EXTENSION.test(filePath);
}

/**
 * Files the usual runners collect as tests (pytest, vitest/jest, node --test, go test, cargo's tests/);
 * `tests.py` is the module Django's and unittest's `test*.py` discovery finds in each app.
 */
export function isTestFile(filePath: string): boolean {
  const name = path.posix.basename(filePath);
  const dirs = path.posix.dirname(filePath).split('/');
  if (name.endsWith('.py'))
    return name.startsWith('test_') || name.endsWith('_test.py') || name === 'tests.py';
  if (name.endsWith('_test.go')) return true;
  if (name.endsWith('.rs')) return dirs.includes('tests');
  if (!isJsFile(name)) return false;
  return (
    /[._-](?:test|spec)\.[^.]+$/.test(name) ||
    /^test(?:[.-]|$)/.test(name) ||
    dirs.includes('__tests__') ||
    dirs.includes('test') ||
    dirs.includes('tests')
  );
}

/** Test files plus the files that shape them (conftest.py, test setup files) and Rust sources (unit tests live inline). */
export function needsTestFacts(filePath: string): boolean {
  const name = path.posix.basename(filePath);
  return (
    isTestFile(filePath) ||
    name === 'conftest.py' ||
    name.endsWith('.rs') ||
    /^(?:setup-?tests|(?:vitest|jest)\.setup)\.(?:[cm]?[jt]s|[jt]sx)$/i.test(name)
  );
}

export type TestConfigKind =
  | 'package_json'
  | 'pyproject'
  | 'pytest_ini'
  | 'setup_cfg'
  | 'tox_ini'
  | 'conftest'
  | 'js_runner_config'
  | 'guardkit_config';

/**
 * JS runners' config files, browser and end-to-end runners' too (karma, playwright, cypress,
 * webdriverio): a change to one is to the tests, never product code the trusted runs take.
 */
const JS_RUNNER_CONFIGS = [
  /^(?:vitest|vite|jest|ava)\.(?:config|workspace)\.[cm]?[jt]s$/,
  /^(?:playwright|cypress|nightwatch)\.config\.[cm]?[jt]s$/,
  /^(?:karma|wdio|protractor)\.conf\.[cm]?[jt]s$/,
];

/** Which kind of file that decides which tests run this is, if any. */
export function testConfigKind(filePath: string): TestConfigKind | undefined {
  const name = path.posix.basename(filePath);
  switch (name) {
    case 'package.json':
      return 'package_json';
    case 'pyproject.toml':
      return 'pyproject';
    case 'pytest.ini':
      return 'pytest_ini';
    case 'setup.cfg':
      return 'setup_cfg';
    case 'tox.ini':
      return 'tox_ini';
    case 'conftest.py':
      return 'conftest';
  }
  if (JS_RUNNER_CONFIGS.some((pattern) => pattern.test(name))) return 'js_runner_config';
  if (/^(?:.*\/)?\.guardkit\/config\.ya?ml$/.test(filePath)) return 'guardkit_config';
  return undefined;
}

export function isTestConfigFile(filePath: string): boolean {
  return testConfigKind(filePath) !== undefined;
}

/** Directories whose every file belongs to the tests (helpers, fixtures, data), whatever its name. */
// testdata/ holds what tests read (go never builds it; Python suites use the name too).
const TEST_DIRECTORIES = new Set(['tests', 'test', '__tests__', 'testdata']);

/**
 * Files that decide which tests run and how they judge: test files, test support (conftest.py, setup
 * files, anything under a tests/ directory such as assertion helpers) and test-selection config. Rust
 * sources count only under tests/, since src/*.rs is also code.
 */
export function isTestSideFile(file: string): boolean {
  if (
    file
      .split('/')
      .slice(0, -1)
      .some((directory) => TEST_DIRECTORIES.has(directory))
  )
    return true;
  if (file.endsWith('.rs')) return isTestFile(file);
  return needsTestFacts(file) || isTestConfigFile(file);
}

/**
 * A test-side file the runner loads as code or configuration (not fixture data or bytecode it writes):
 * what an ignored file must be for the tree fingerprint and the integrity check to care about it.
 */
export function isRunnerLoadedFile(file: string): boolean {
  if (!isTestSideFile(file) || file.split('/').includes('__pycache__')) return false;
  return file.endsWith('.py') || isJsFile(file) || needsTestFacts(file) || isTestConfigFile(file);
}

/** Keys whose new values exclude tests outright, and command-line flags that narrow a run. */
