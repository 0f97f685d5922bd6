import path from 'node:path';
import { isTestDataFile } from '../scope/test-data.js';
import { collectIntegrityFacts } from '../analysis/test-facts.js';
import {
  explainWithTrustedRun,
  findIntegrityIssues,
  unexplainedRegressions,
  type ExplainedFinding,
  type FileVersions,
  type IntegrityFinding,
} from '../integrity/integrity.js';
import type { RunRecord } from '../records/run-record.js';
import { runsPythonDoctests } from '../evaluation/doctest-splice.js';
import { evaluateCandidate, type Evaluation } from '../evaluation/evaluate.js';
import {
  EDITED_INSTALL,
  plantedEnvironment,
  plantedOf,
  readEnvironmentOnce,
  type PlantedFile,
} from '../evaluation/planted-environment.js';
import { readEvaluation } from '../evaluation/stored-evaluation.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { isJsFile, isTestConfigFile, isTestFile, needsTestFacts } from '../scope/test-paths.js';
import {
  changedSince,
  gitQuery,
  listAtCommit,
  readAtCommit,
  readManyAtCommit,
} from '../repo/git.js';
import { collectTestInputFacts } from '../analysis/test-inputs.js';
import type { TestInputFacts } from '../integrity/special-cased-inputs.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { serverPython } from '../runner/pyenv.js';
import type { DoctestsRun, ParsedDoctests } from '../integrity/doctest-examples.js';
import { pythonDoctestExamples } from '../analysis/python-doctests.js';
import { pythonDoctestFiles } from '../analysis/python-doctest-files.js';
import { baseProductCode, isSource } from '../scope/product-code.js';
import { hiddenRunnerFiles } from '../repo/runner-loaded.js';
import { findTaskFile } from '../repo/tasks.js';
import { firstPartyModules } from '../runner/first-party.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import { latestRun } from '../records/runs.js';
import { openRepository, openTask, type BaseMoved, type TaskScope } from './task-scope.js';
import { readWorktreeFile } from '../repo/worktree-file.js';
import type { TrustedConfig } from '../repo/trusted-config.js';
import { effectivePolicy } from '../sandbox/policy.js';
import { STEP, timed, type Steps } from '../evaluation/steps.js';

export interface IntegrityReport {
  base_commit: string;
  findings: IntegrityFinding[];
  must_fix: number;
  files_checked: string[];
  tests_at_base?: number;
  tests_now?: number;
  base_moved?: BaseMoved | null;
}

/** What check_test_integrity reports: findings as the approval guard would weigh them right now. */
export interface IntegrityCheck extends Omit<IntegrityReport, 'findings'> {
  findings: ExplainedFinding[];
  /** The trusted runs the findings were judged by, when they describe the current tree. */
  trusted_evaluation?: TrustedEvaluationSummary | null;
  /** Where the dynamic verdict came from, or why the findings are static only. */
  dynamic_verdict: DynamicVerdict;
  /** Where the call's time went: reading the changes, and waiting on the trusted runs. */
  took?: { total_ms: number; static_ms: number; trusted_runs_ms: number };
}

export interface DynamicVerdict {
  /**
   * `from_approval`: an approval attempt's trusted runs of this tree; `evaluated`: run by this check;
   * `not_run`: the findings are static only, `detail` says why.
   */
  state: 'from_approval' | 'evaluated' | 'not_run';
  detail: string;
}

export interface TrustedEvaluationSummary {
  run_id: string;
  regressions: string[];
  acknowledged: string[];
  left_out: string[];
  diverging_new_tests: string[];
}

export interface IntegrityOptions {
  /** Run the trusted evaluation when no approval attempt made one for this tree (default true). */
  dynamic?: boolean;
  signal?: AbortSignal;
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
  /** Where the call's steps are counted; the caller reads the steps in progress from it. */
  steps?: Steps;
}

const STATIC_ONLY = 'static findings only';

/**
 * Compares the working tree (committed, staged, unstaged and untracked) with the base commit and reports the
 * ways a Player makes tests pass without making the code work. With a task, the findings the runs can
 * settle are judged by the trusted runs, as the approval guard will judge them: an approval attempt's
 * runs of this tree, or runs started here from the latest candidate run.
 */
export async function checkTestIntegrity(
  worktree: string,
  taskId: string | undefined,
  baseRef?: string,
  options: IntegrityOptions = {},
): Promise<IntegrityCheck> {
  if (taskId === undefined) {
    const report = await integrityAgainstBase(await openRepository(worktree, baseRef), undefined);
    return {
      ...report,
      dynamic_verdict: {
        state: 'not_run',
        detail: `${STATIC_ONLY}: the trusted runs need task_id (they start from the task's latest run_independent_tests run)`,
      },
    };
  }
  // A task is judged against its pinned base; a moved base is reported, not followed.
  const started = Date.now();
  const scope = await openTask(worktree, taskId, baseRef);
  // The static reading and the trusted runs are independent: one waits while the other works.
  const elapsed = <T>(work: Promise<T>) =>
    work.then((value) => ({ value, ms: Date.now() - started }));
  // One read of the environment for the whole check: the static findings and the runs share it.
  const planted = plantedOf(readEnvironmentOnce(scope, options.steps));
  const [statics, dynamics] = await Promise.all([
    elapsed(
      timed(options.steps, STEP.integrity, () => integrityAgainstBase(scope, taskId, planted)),
    ),
    elapsed(trustedRuns(scope, options, planted)),
  ]);
  const report = statics.value;
  const judged = dynamics.value;
  const took = {
    total_ms: Date.now() - started,
    static_ms: statics.ms,
    trusted_runs_ms: dynamics.ms,
  };
  if (judged.state === 'not_run') {
    return {
      ...report,
      base_moved: scope.base_moved,
      trusted_evaluation: null,
      dynamic_verdict: { state: 'not_run', detail: `${STATIC_ONLY}: ${judged.why}` },
      took,
    };
  }
  const { evaluation, run_id, acknowledged, candidate_tests } = judged;
  // As the approval guard applies them: the trusted run confirms a finding or explains it away.
  const evidence = {
    regressions: evaluation.regressions,
    acknowledged,
    candidate_tests,
    ...(evaluation.gone_from_player_run
      ? { gone_from_player_run: evaluation.gone_from_player_run }
      : {}),
  };
  const findings = [
    ...explainWithTrustedRun(report.findings, evidence),
    ...unexplainedRegressions(report.findings, evidence),
  ];
  const mustFix = findings.filter((finding) => finding.severity === 'must_fix').length;
  return {
    ...report,
    findings,
    must_fix: mustFix,
    base_moved: scope.base_moved,
    trusted_evaluation: {
      run_id,
      regressions: evaluation.regressions.map((item) => `${item.test} (${item.outcome})`),
      acknowledged,
      left_out: evaluation.left_out.map((item) => `${item.file} (${item.change})`),
      diverging_new_tests: evaluation.diverging_new_tests.map(
        (item) =>
          `${item.test} (${item.trusted_outcome}; left out: ${item.responsible.join(', ')})`,
      ),
    },
    dynamic_verdict: {
      state: judged.state,
      detail:
        judged.state === 'from_approval'
          ? `judged by the trusted runs an approval attempt made of run ${run_id}, which describes this tree`
          : `judged by trusted runs made now from run ${run_id} (base tests and config on this code; the Player's tests in their own run): ${report.must_fix} static must_fix, ${mustFix} after running`,
    },
    took,
  };
}

type TrustedRuns =
  | { state: 'not_run'; why: string }
  | {
      state: 'from_approval' | 'evaluated';
      run_id: string;
      evaluation: Evaluation;
      acknowledged: string[];
      candidate_tests: RunRecord['tests'];
    };

/**
 * The trusted runs of the tree as it is now: an approval attempt's, else (unless dynamic: false) made
 * now from the latest candidate run of this tree, which record_verdict's evaluation then finds made.
 */
async function trustedRuns(
  scope: TaskScope,
  options: IntegrityOptions,
  planted: Promise<PlantedFile[]>,
): Promise<TrustedRuns> {
  const { worktree, taskId } = scope;
  const [run, tree] = await Promise.all([latestRun(worktree, taskId), treeFingerprint(worktree)]);
  if (run.state !== 'ok')
    return {
      state: 'not_run',
      why: `${taskId} has no ${run.state === 'corrupt' ? 'readable ' : ''}test run yet: call run_independent_tests, then check again`,
    };
  const stored = await readEvaluation(worktree, taskId, run.value.run_id);
  if (stored?.evaluation.trusted && stored.tree_hash === tree) {
    return {
      state: 'from_approval',
      run_id: stored.run_id,
      evaluation: stored.evaluation,
      acknowledged: stored.acknowledged_changes.map((change) => change.test),
      candidate_tests: run.value.tests,
    };
  }
  if (options.dynamic === false) return { state: 'not_run', why: 'dynamic: false was asked' };
  if (run.value.tree_hash !== tree)
    return {
      state: 'not_run',
      why: `the latest run (${run.value.run_id}) describes an older tree: call run_independent_tests, then check again`,
    };
  const evaluation = await evaluateCandidate({
    worktree,
    taskId,
    baseCommit: scope.base.commit,
    config: scope.config,
    candidateTests: run.value.tests,
    candidateLoaded: run.value.changed_files_loaded,
    planted,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
    ...(options.steps ? { steps: options.steps } : {}),
  }).catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
  if (typeof evaluation === 'string')
    return { state: 'not_run', why: `the trusted runs could not be made (${evaluation})` };
  if (!evaluation.trusted) {
    const planted = evaluation.planted.map((item) => `${item.file}: ${item.problem}`);
    return {
      state: 'not_run',
      why: `the trusted runs did not start: the borrowed environment was tampered with (${planted.join('; ')})`,
    };
  }
  return {
    state: 'evaluated',
    run_id: run.value.run_id,
    evaluation,
    acknowledged: [],
    candidate_tests: run.value.tests,
  };
}

/** The integrity check for a repository already opened at a known base commit, with its config. */
export async function integrityAgainstBase(
  repository: TrustedConfig & { worktree: string },
  taskId: string | undefined,
  /** The caller's one read of the environment; read here when absent. */
  planted?: Promise<PlantedFile[]>,
): Promise<IntegrityReport> {
  const { worktree } = repository;
  const base = repository.base.commit;
  const taskFile = taskId
    ? await findTaskFile(worktree, taskId, base).catch(() => undefined)
    : undefined;
  const changed = (await changedSince(worktree, base, { skipPrefix: STORE_PREFIX })).filter(
    (file) => !file.startsWith(STORE_PREFIX),
  );
  const relevant = changed.filter(
    (file) =>
      needsTestFacts(file) || isTestConfigFile(file) || isTestDataFile(file) || file === taskFile,
  );
  const baseFiles = await listAtCommit(worktree, base, ['.']);
  const product = await baseProductCode(worktree, base, baseFiles);
  const versions = (files: string[]): Promise<FileVersions[]> =>
    Promise.all(
      files.map(async (file) => {
        const [before, now] = await Promise.all([
          // Each side as large as a working-tree read at most; an unreadable side is compared as absent.
          readAtCommit(worktree, base, file).catch(() => undefined),
          readWorktreeFile(worktree, path.join(worktree, file)).catch(() => undefined),
        ]);
        return {
          path: file,
          ...(before !== undefined ? { base: before } : {}),
          ...(now !== undefined ? { now } : {}),
        };
      }),
    );
  const files = await versions(relevant);
  // Every changed source file that is not a test: a module the Player added is loaded by its code.
  const productCode = await versions(
    changed.filter((file) => product.isProductCode(file) || isSource(file)),
  );
  const counts = taskId ? await testCounts(worktree, taskId) : {};
  const sandbox = effectivePolicy(repository.config.coachgate.sandbox);
  const doctests = await doctestsRun(worktree, base, baseFiles, productCode);
  const findings = findIntegrityIssues({
    files,
    ...(await collectIntegrityFacts(files, { sandbox })),
    ...(taskFile ? { task_file: taskFile } : {}),
    first_party_modules: await firstPartyModules(worktree),
    ...counts,
    hidden_files: await hiddenFiles(
      worktree,
      planted ?? plantedEnvironment(worktree, taskId, base),
    ),
    product_code: productCode,
    doctests_run: doctests,
    ...(doctests.python ? { doctest_examples: await parsedDoctests(productCode, sandbox) } : {}),
    doctest_files: await doctestTextFiles(worktree, base, baseFiles, changed, sandbox),
    test_inputs: await testInputs(worktree, base, baseFiles, files, productCode, sandbox),
  });
  return {
    base_commit: base,
    findings,
    must_fix: findings.filter((finding) => finding.severity === 'must_fix').length,
    files_checked: relevant,
    ...counts,
  };
}

/**
 * Which doctests the base runs, asked only when a changed product file had examples at the base:
 * Python's when its config or tests name them (one `git grep` of the base commit), Rust's when a
 * crate has a library (cargo test runs its doc tests).
 */
async function doctestsRun(
  worktree: string,
  base: string,
  baseFiles: readonly string[],
  productCode: readonly FileVersions[],
): Promise<DoctestsRun> {
  // A Python prompt anywhere: doctest finds one inside any line of a string (a __test__ entry).
  const withExamples = productCode.filter(
    (file) =>
      file.base !== undefined &&
      (file.path.endsWith('.py') ? />>>/ : /^\s*\/\/[/!]\s*```/m).test(file.base),
  );
  const python =
    withExamples.some((file) => file.path.endsWith('.py')) &&
    (await runsPythonDoctests(worktree, base));
  const rust =
    withExamples.some((file) => file.path.endsWith('.rs')) &&
    baseFiles.some((file) => file === 'src/lib.rs' || file.endsWith('/src/lib.rs'));
  return { python, rust };
}

/** The changed Python files' examples at the base and now, as doctest's own parser reads them. */
async function parsedDoctests(
  productCode: readonly FileVersions[],
  sandbox: SandboxPolicy,
): Promise<ParsedDoctests> {
  const files = productCode.filter((file) => file.path.endsWith('.py') && file.base !== undefined);
  const texts = files.flatMap((file) => [file.base!, file.now ?? '']);
  const parsed = await pythonDoctestExamples(texts, await serverPython(), sandbox);
  return new Map(
    files.flatMap((file, index) => {
      const [before, after] = [parsed[2 * index], parsed[2 * index + 1]];
      return before && after ? [[file.path, { base: before, now: after }] as const] : [];
    }),
  );
}

/** What makes a base module a candidate to run text files as doctests; its syntax tree decides. */
const DOCTEST_FILE_RUNNERS = 'DocFileSuite|testfile';

/**
 * The changed text files the base's modules run whole as doctests (`DocFileSuite`, `testfile`,
 * from a `load_tests` or anywhere), with their examples at the base and now, as doctest's parser
 * reads them. Asked only when the Player changed a non-Python file the base had.
 */
async function doctestTextFiles(
  worktree: string,
  base: string,
  baseFiles: readonly string[],
  changed: readonly string[],
  sandbox: SandboxPolicy,
): Promise<ParsedDoctests> {
  const present = new Set(baseFiles);
  const candidates = changed.filter((file) => !file.endsWith('.py') && present.has(file));
  if (candidates.length === 0) return new Map();
  const callers = await gitQuery(worktree, [
    'grep',
    '-l',
    '-E',
    '-e',
    DOCTEST_FILE_RUNNERS,
    base,
    '--',
    '*.py',
  ]).then(
    (found) =>
      found
        .split('\n')
        .filter(Boolean)
        .map((line) => line.slice(base.length + 1)),
    () => [], // exit 1: no match
  );
  if (callers.length === 0) return new Map();
  const texts = await readManyAtCommit(worktree, base, callers);
  const python = await serverPython();
  const named = await pythonDoctestFiles(
    [...texts].map(([file, text]) => ({ path: file, text })),
    python,
    sandbox,
  );
  const files = candidates.filter((file) => named.has(file));
  if (files.length === 0) return new Map();
  const before = await readManyAtCommit(worktree, base, files);
  const after = await Promise.all(
    files.map((file) => readWorktreeFile(worktree, path.join(worktree, file)).catch(() => '')),
  );
  const parsed = await pythonDoctestExamples(
    files.flatMap((file, index) => [{ file: before.get(file) ?? '' }, { file: after[index]! }]),
    python,
    sandbox,
  );
  return new Map(
    files.flatMap((file, index) => {
      const [before, after] = [parsed[2 * index], parsed[2 * index + 1]];
      return before && after ? [[file, { base: before, now: after }] as const] : [];
    }),
  );
}

/** Base test files read at most: a bound on one process's input in a very large repository. */
const MAX_TEST_FILES = 2000;

/**
 * The literals of the base's tests and the Player's changed tests, and the changed product files'
 * literal uses: read only when the Player changed Python or JS/TS product code, for those languages.
 */
async function testInputs(
  worktree: string,
  base: string,
  baseFiles: readonly string[],
  files: readonly FileVersions[],
  productCode: FileVersions[],
  sandbox: SandboxPolicy,
): Promise<TestInputFacts> {
  const languages = [
    (file: string) => file.endsWith('.py'),
    (file: string) => isJsFile(file),
  ].filter((read) => productCode.some((file) => read(file.path) && file.now !== undefined));
  if (languages.length === 0) return { inputs: [], product: [] };
  const baseTests = baseFiles.filter(
    (file) => isTestFile(file) && languages.some((read) => read(file)),
  );
  const texts = await readManyAtCommit(worktree, base, baseTests.slice(0, MAX_TEST_FILES));
  const changedTests = files.flatMap((file) =>
    isTestFile(file.path) && file.now !== undefined ? [{ path: file.path, text: file.now }] : [],
  );
  const tests = [...[...texts].map(([file, text]) => ({ path: file, text })), ...changedTests];
  return collectTestInputFacts(tests, productCode, await serverPython(), sandbox);
}

/**
 * Ignored files the runner loads: test-side code and config, and the site hooks of the project's own
 * virtualenv and its pytest plugins, which would run the Player's code in every run (as the trusted runs
 * refuse them).
 */
async function hiddenFiles(
  worktree: string,
  environment: Promise<PlantedFile[]>,
): Promise<string[]> {
  const [runnerFiles, planted] = await Promise.all([hiddenRunnerFiles(worktree), environment]);
  // An installed file edited in place is not hidden code to commit: the approval refuses it as a
  // planted environment, with how to reinstall it.
  const siteHooks = planted
    .filter((item) => !item.problem.startsWith(EDITED_INSTALL))
    .map((item) => item.file)
    .filter((file) => file.includes('/site-packages/') || /\.(?:dist|egg)-info\//.test(file));
  return [...runnerFiles, ...siteHooks];
}

/** Test totals now and at the base, when the latest stored run compared against a baseline. */
async function testCounts(
  worktree: string,
  taskId: string,
): Promise<{ tests_at_base?: number; tests_now?: number }> {
  const run = await latestRun(worktree, taskId);
  if (run.state !== 'ok' || !run.value.baseline) return {};
  return { tests_at_base: run.value.baseline.tests_total, tests_now: run.value.counts.total };
}
