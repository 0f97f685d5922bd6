/** The shapes integrity rules share: kept apart so rule files and integrity.ts import no cycle. */

/** One changed path: its content at the base commit and now. `undefined` = absent on that side. */
export interface FileVersions {
  /** Worktree-relative POSIX path. */
  path: string;
  base?: string;
  now?: string;
}

export interface TestCase {
  /** Qualified within its file: `TestClass.test_x`, `describe name > it name`, `TestX`, `fn_name`. */
  name: string;
  line: number;
  assertions: number;
  /** A fingerprint of the body alone (not the name, indentation or place): a rename keeps it. */
  body?: string;
  /** Declared with a parameter table (`pytest.mark.parametrize`, `it.each`): one test, many cases. */
  parametrized?: boolean;
}

/** A skip/focus marker; `test` names the test (or class/suite) it decorates or sits in, when there is one. */
export interface MarkerOccurrence {
  line: number;
  marker: string;
  test?: string;
}

/** A module replaced wholesale; `module` is `<dynamic>` when the name is computed at runtime. */
export interface ModuleStub {
  line: number;
  module: string;
  /** How it was stubbed, as written: `sys.modules[...]`, `vi.mock`, `monkeypatch.setitem`… */
  via: string;
  test?: string;
}

export interface TestFileFacts {
  tests: TestCase[];
  skips: MarkerOccurrence[];
  focuses: MarkerOccurrence[];
  module_stubs: ModuleStub[];
  parser: 'python_ast' | 'typescript' | 'line_scan';
  /** Why a line scan stood in for the language's parser (python3 missing, syntax error). */
  fallback_reason?: string;
}

/** Test-selection settings of one config file, by dotted key (`scripts.test`, `addopts`, `test.exclude`). */
export type ConfigSettings = Record<string, string>;

export interface BaseAndNow<T> {
  base?: T;
  now?: T;
}

export type IntegrityFindingKind =
  | 'skip_added'
  | 'focus_added'
  | 'test_deleted'
  | 'test_file_deleted'
  | 'assertions_removed'
  | 'test_config_changed'
  | 'task_file_modified'
  | 'module_stubbed'
  | 'tests_count_dropped'
  | 'test_data_changed'
  | 'hidden_from_git'
  | 'runner_detection'
  | 'harness_reach'
  | 'doctest_changed'
  | 'special_cases_test_input'
  | 'base_test_fails';

export interface IntegrityFinding {
  kind: IntegrityFindingKind;
  severity: 'must_fix' | 'should_fix';
  /** Worktree-relative path; `.` for findings about the whole suite. */
  file: string;
  line?: number;
  /** The test a finding is about, as the file's parser names it (`TestClass.test_x`, `suite > case`). */
  test?: string;
  detail: string;
  /** For a gone base test (or a deleted file's tests): the added tests that look like them now. */
  replaced_by?: TestSuccessor[];
  /** The gone base tests nothing in the Player's tree looks like: deleted, unless a run says otherwise. */
  not_replaced?: string[];
}

/** A test the Player's tree holds in place of a base test that is gone under its old name or file. */
export interface TestSuccessor {
  /** The base test, as the parser names it. */
  test: string;
  /** Where it is now, and its name there. */
  file: string;
  as: string;
  how: 'moved' | 'renamed' | 'wrapped' | 'split' | 'parametrized';
}
