/** Shapes shared by the report parsers, the run outcome and the failure classifier. */

export type TestStatus = 'passed' | 'failed' | 'error' | 'skipped';

export interface TestCaseResult {
  /** The id a user would type to select the test (pytest node id, `file > suite > name`, `pkg/TestName`). */
  id: string;
  status: TestStatus;
  /** The start of the failure (about 300 characters), for failed/errored/skipped tests. */
  message?: string;
  /** A parametrized case's test function and parameter values, where the runner reports them. */
  case?: ParametrizedCase;
}

/** A parametrized case by what it is rather than where it sits (src/runner/case-values.ts). */
export interface ParametrizedCase {
  /** The test function's id (`tests/test_x.py::test_f`). */
  function: string;
  /** Its parameter values as written from their structure (`value=150, want=100`). */
  values: string;
}

export interface TestCounts {
  total: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
}

export type RunStatus = 'passed' | 'failed' | 'error' | 'timeout' | 'no_tests';

export type FailureClass =
  | 'none'
  | 'code'
  | 'infrastructure'
  | 'collection'
  | 'timeout'
  | 'no_tests'
  | 'environment'
  | 'lint'
  | 'build';

export interface FailureClassification {
  failure_class: FailureClass;
  /** What was found, quoting the output line it was found on. */
  reason: string;
  /** The next step, specific to the class and the cause. */
  advice: string;
}

/** A report file a runner may leave in the report directory, and how it got there. */
export interface ReportChannel {
  file: string;
  format: 'junit' | 'jest-json' | 'pytest-jsonl';
  /** How the ids were obtained, for `tests_source` and `env.notes`. */
  source: string;
}
