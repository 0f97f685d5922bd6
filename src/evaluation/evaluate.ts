import { findTestId } from '../requirements/requirements.js';
import { describeSandbox } from '../config/sandbox-policy.js';
import { positionMoved, sameTestsIn } from '../runner/stable-test-id.js';
import type { z } from 'zod';
import type { EvaluationSchema } from './evaluation-record.js';
import { isRunnerLoadedFile, isTestSideFile } from '../scope/test-paths.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { HARNESS_CHANGED } from '../runner/harness-case.js';
import type { TestCaseResult } from '../runner/report/types.js';
import { judgedRepetition } from '../observation/repetition.js';
import { treeRuns, type WaitOptions } from './early-runs.js';
import { STEP, timed } from './steps.js';
import type { TrustedSelection } from '../scope/product-code.js';
import {
  idsNameFiles,
  isNamedAsTest,
  type TrustedRuns,
  type TrustedRunsRequest,
} from './trusted-runs.js';

/** One approval evaluation: what the guard reads about the three server-made runs. */
export type Evaluation = z.infer<typeof EvaluationSchema>;
/** A base test that passed at the base and does not pass against the Player's code. */
type Regression = Evaluation['regressions'][number];

export interface EvaluationRequest extends TrustedRunsRequest, WaitOptions {
  /** Tests of the latest stored candidate run (the worktree as it is): collection and divergence. */
  candidateTests: Pick<TestCaseResult, 'id' | 'status' | 'case'>[];
  /** The files changed since the base that the candidate run's tests imported, where it lists them. */
  candidateLoaded?: string[];
  /** The worktree's fingerprint, when the caller has just taken it; taken here otherwise. */
  tree?: string;
  /** Tests the Coach cites for kept behaviour: which of them are base tests that still pass. */
  keptTests?: string[];
  /** Every test the Coach cites as evidence: a repetition of one that fails refuses the approval. */
  citedTests?: string[];
}

/**
 * Judges the worktree as it is by the base's tests, run the trusted way: baseline (base tests on base
 * code, cached), trusted (base tests and config on the Player's code) and fail-to-pass (the Player's tests
 * on the base code), each in its own clean snapshot outside the worktree. The runs are those a stored
 * candidate run of this tree started (src/evaluation/early-runs.ts) when they are still running or done,
 * else they start now. Nothing is run when the borrowed environment was tampered with.
 */
export async function evaluateCandidate(request: EvaluationRequest): Promise<Evaluation> {
  const { signal, onProgress, steps, runSteps } = request;
  const tree =
    request.tree ?? (await timed(steps, STEP.git, () => treeFingerprint(request.worktree)));
  const runs = await treeRuns(
    { ...request, tree },
    {
      ...(signal ? { signal } : {}),
      ...(onProgress ? { onProgress } : {}),
      ...(steps ? { steps } : {}),
      ...(runSteps ? { runSteps } : {}),
    },
  );
  const evaluation = judged(
    runs,
    request.baseCommit,
    request.candidateTests,
    request.candidateLoaded,
    request.citedTests,
  );
  const kept = request.keptTests ?? [];
  if (kept.length === 0 || !runs.baseline || !runs.trusted) return evaluation;
  return {
    ...evaluation,
    kept_base_tests: keptBaseTests(kept, runs.baseline.tests, runs.trusted.tests),
  };
}

/** The trusted runs compared with the base's (PASS_TO_PASS) and with the candidate run. */
function judged(
  runs: TrustedRuns,
  baseCommit: string,
  candidateTests: EvaluationRequest['candidateTests'],
  candidateLoaded: string[] = [],
  citedTests: string[] = [],
): Evaluation {
  const { selection, command, baseline, trusted } = runs;
  const evaluation: Evaluation = {
    base_commit: baseCommit,
    command: command ? (command.argv ?? [command.shellCommand ?? '']) : [],
    planted: runs.planted,
    product_roots: selection.product_roots,
    taken_from_player: selection.code,
    taken_because: selection.taken_because,
    unjudged_code: selection.unjudged_code,
    vacuous: isVacuous(selection),
    null_turn: isNullTurn(selection),
    unjudged_loaded: unjudgedLoaded(selection, candidateLoaded),
    startup_changed: selection.startup_changed,
    left_out: selection.left_out,
    taken_by_acknowledgement: selection.acknowledged,
    baseline: null,
    trusted: null,
    regressions: [],
    preexisting_failures: [],
    passing_on_base_code: [],
    uncollected_test_files: [],
    diverging_new_tests: [],
  };
  if (!command || !baseline || !trusted) return evaluation;
  // A doctest a change moved keeps its identity (src/runner/stable-test-id.ts); both runs ran the
  // base's test files, so a parametrized case is its id.
  const now = sameTestsIn(baseline.tests, trusted.tests, 'ids');
  const unloaded = unloadedUnits(baseline.tests, trusted.tests);
  for (const test of baseline.tests) {
    const after = now.of(test);
    if (test.status === 'passed' && after?.status !== 'passed') {
      const message = after
        ? after.message
        : (unloaded(test.id) ?? (trusted.status === 'timeout' ? CUT_BY_TIME_LIMIT : undefined));
      evaluation.regressions.push({
        test: test.id,
        outcome: after ? (after.status as Regression['outcome']) : 'missing',
        ...(message ? { message } : {}),
      });
    } else if (
      (test.status === 'failed' || test.status === 'error') &&
      after &&
      after.status !== 'passed'
    ) {
      evaluation.preexisting_failures.push(test.id);
    }
  }
  const harness = harnessChangedOnlyInTrustedRun(baseline.tests, trusted.tests);
  if (harness) evaluation.regressions.push(harness);
  return {
    ...evaluation,
    baseline: {
      status: baseline.status,
      cached: baseline.cached,
      tests_total: baseline.tests.length,
    },
    trusted: {
      status: trusted.status,
      tests_total: trusted.tests.length,
      ...(trusted.sandbox ? { sandbox: describeSandbox(trusted.sandbox) } : {}),
    },
    unshared_failures: unsharedFailures(
      baseline.tests,
      candidateTests,
      evaluation.preexisting_failures,
    ),
    // Without per-test results at the base nothing is known of which gone test passed there.
    ...(baseline.tests.length > 0
      ? { gone_from_player_run: goneFromPlayerRun(baseline.tests, candidateTests) }
      : {}),
    passing_on_base_code: runs.passing_on_base_code,
    ...(runs.fail_to_pass_cached !== undefined
      ? { fail_to_pass_cached: runs.fail_to_pass_cached }
      : {}),
    test_files_written: [
      ...new Set([
        ...(runs.trusted?.wrote_test_files ?? []),
        ...(runs.new_tests?.wrote_test_files ?? []),
      ]),
    ],
    uncollected_test_files: idsNameFiles(command)
      ? runs.added_tests.filter(
          (file) => isNamedAsTest(file) && !candidateTests.some((test) => test.id.startsWith(file)),
        )
      : [],
    ...(trusted.observation ? { observation: trusted.observation } : {}),
    ...repeated(runs, citedTests),
    diverging_new_tests: runs.new_tests
      ? divergingNewTests(candidateTests, runs.new_tests.tests, selection, {
          byFile: idsNameFiles(command),
          baseline: baseline.tests,
        })
      : [],
  };
}

/**
 * What the repetitions of the trusted and new-tests runs showed of the tests the change turned from
 * failing to passing (at the base, or the Player's on the base's code) and of the cited ones.
 */
function repeated(runs: TrustedRuns, cited: string[]): Pick<Evaluation, 'repetition'> {
  const passedOnBase = new Set([
    ...(runs.baseline?.tests ?? []).filter((test) => test.status === 'passed').map((t) => t.id),
    ...runs.passing_on_base_code,
  ]);
  const isCited = (id: string) => cited.some((test) => findTestId(test, [id]) !== undefined);
  const repetition = judgedRepetition(
    [runs.trusted?.repetition, runs.new_tests?.repetition],
    passedOnBase,
    isCited,
  );
  return repetition ? { repetition } : {};
}

/** The base tests among `cited` that passed at the base and in the trusted run. */
function keptBaseTests(
  cited: readonly string[],
  baseline: readonly TestCaseResult[],
  trusted: readonly TestCaseResult[],
): string[] {
  const now = sameTestsIn(baseline, trusted, 'ids');
  const kept = baseline
    .filter((test) => test.status === 'passed' && now.of(test)?.status === 'passed')
    .map((test) => test.id);
  return [...new Set(cited.map((test) => findTestId(test, kept)).filter((id) => id !== undefined))];
}

/** The Player changed source files and the trusted runs took none of them: nothing of theirs ran. */
export function isVacuous(selection: TrustedSelection): boolean {
  return (
    selection.unjudged_code.length > 0 &&
    selection.code.length === 0 &&
    selection.acknowledged.length === 0
  );
}

/**
 * The Player changed no product file at all (not even one no rule took): whatever passes, passes on
 * the base's own code. The first agent every benchmark audit tries, and one that must score zero.
 */
function isNullTurn(selection: TrustedSelection): boolean {
  return (
    selection.code.length === 0 &&
    selection.unjudged_code.length === 0 &&
    selection.acknowledged.length === 0
  );
}

/**
 * Changed files the Player's own run imported that the trusted runs left out and that are neither
 * tests nor test support: the tests exercise them, yet the trusted runs ran the base's version.
 */
function unjudgedLoaded(selection: TrustedSelection, loaded: readonly string[]): string[] {
  const leftOut = new Set(
    selection.left_out.filter((item) => item.change !== 'deleted').map((item) => item.file),
  );
  return loaded.filter(
    (file) =>
      leftOut.has(file) &&
      !isTestSideFile(file) &&
      !selection.test_support.includes(file) &&
      !selection.new_tests.includes(file),
  );
}

/**
 * The harness case (a start-up hook of the tree, a plugin of the product's, bytecode the run wrote)
 * no base test carries: seen in the trusted run and not at the base, it decides the approval as a
 * base test's failure would, even when the Player's run never showed it (code that behaves
 * otherwise in a snapshot, a start-up hook only the snapshots' import path reaches).
 */
function harnessChangedOnlyInTrustedRun(
  baseline: readonly TestCaseResult[],
  trusted: readonly TestCaseResult[],
): Regression | undefined {
  const changed = trusted.find((test) => test.id === HARNESS_CHANGED && test.status !== 'passed');
  if (!changed || baseline.some((test) => test.id === HARNESS_CHANGED)) return undefined;
  return {
    test: HARNESS_CHANGED,
    outcome: changed.status as Regression['outcome'],
    ...(changed.message ? { message: changed.message } : {}),
  };
}

/**
 * Why a base test is missing from the trusted run, when a unit that holds it failed to load there:
 * a Go package that did not build (`pkg` holds `pkg/TestX`), a test module pytest could not collect
 * (`tests/test_x.py` holds `tests/test_x.py::test_y`), an error entry the baseline did not have.
 */
function unloadedUnits(
  baseline: readonly TestCaseResult[],
  trusted: readonly TestCaseResult[],
): (id: string) => string | undefined {
  const atBase = new Set(baseline.map((test) => test.id));
  const failed = trusted.filter((test) => test.status === 'error' && !atBase.has(test.id));
  return (id) => {
    const unit = failed.find(
      (test) => id.startsWith(`${test.id}/`) || id.startsWith(`${test.id}::`),
    );
    return unit && `${unit.id} did not load: ${unit.message ?? 'no message'}`;
  };
}

/** Why a base test is missing from a trusted run that timed out: the limit, not the code's collection. */
const CUT_BY_TIME_LIMIT =
  'the trusted run reached its time limit before it got there (toolchain.test_timeout, 300 s unless set): a test that no longer ends, or a machine too busy for the limit. Find the hang, or ask for the approval again with a higher limit';

/**
 * The Player's run's failures and errors the base does not share, with how each ended at the base:
 * a refusal names them, so a Coach can tell a break of the Player's from a test the base's run
 * never reached (a base that crashed part-way, a new test). A parametrized case is found at the base
 * by its values where both runs report them, and named with them and the base's id for it.
 */
function unsharedFailures(
  baseline: TestCaseResult[],
  candidate: EvaluationRequest['candidateTests'],
  preexisting: readonly string[],
): NonNullable<Evaluation['unshared_failures']> {
  const shared = new Set(preexisting);
  const atBase = sameTestsIn(candidate, baseline);
  // The Player inserted or removed positional cases: the base's case of that id is another one.
  const moved = positionMoved(
    baseline.map((test) => test.id),
    candidate.map((test) => test.id),
  );
  return candidate
    .filter((test) => test.status === 'failed' || test.status === 'error')
    .flatMap((test) => {
      const before = atBase.of(test);
      if (before && shared.has(before.id)) return [];
      if (!atBase.byValues(test)) {
        const outcome = moved(test.id) ? 'case moved' : (before?.status ?? 'not run');
        return [{ test: test.id, at_base: outcome }];
      }
      return [
        {
          test: test.id,
          at_base: before?.status ?? 'not run',
          values: test.case!.values,
          ...(before && before.id !== test.id ? { base_id: before.id } : {}),
        },
      ];
    });
}

/** Base tests that passed at the base and whose id the Player's run does not have. */
function goneFromPlayerRun(
  baseline: TestCaseResult[],
  candidate: EvaluationRequest['candidateTests'],
): string[] {
  const ran = sameTestsIn(baseline, candidate);
  return baseline
    .filter((test) => test.status === 'passed' && !ran.of(test))
    .map((test) => test.id);
}

/**
 * The Player's added tests that passed in the worktree but not with the base's test infrastructure
 * around the Player's code: something the trusted runs left out (a conftest hook, a setup file, a
 * config, a helper package) made them pass. The left-out files the runner loads and the test
 * support the Player changed are named as responsible.
 */
function divergingNewTests(
  candidate: EvaluationRequest['candidateTests'],
  judged: TestCaseResult[],
  selection: TrustedSelection,
  ids: { byFile: boolean; baseline: TestCaseResult[] },
): Evaluation['diverging_new_tests'] {
  const outcomes = new Map(judged.map((test) => [test.id, test.status]));
  // The new-tests run took the Player's added tests: what it left out is everything else.
  const leftOut = selection.left_out
    .map((item) => item.file)
    .filter((file) => !selection.new_tests.includes(file));
  const loaded = leftOut.filter(
    (file) => isRunnerLoadedFile(file) || selection.test_support.includes(file),
  );
  const responsible = loaded.length > 0 ? loaded : leftOut;
  // Where ids name no file (node --test, mocha), the Player's tests are the ids the base lacks; one
  // the new-tests run does not have at all cannot be told from a renamed base test, so it is not judged.
  const atBase = new Set(ids.baseline.map((test) => test.id));
  const isNew = ids.byFile
    ? (id: string) => selection.new_tests.some((file) => id.startsWith(file))
    : (id: string) => !atBase.has(id) && outcomes.has(id);
  return candidate
    .filter(
      (test) => test.status === 'passed' && isNew(test.id) && outcomes.get(test.id) !== 'passed',
    )
    .map((test) => ({
      test: test.id,
      trusted_outcome: outcomeOf(outcomes.get(test.id)),
      responsible,
    }));
}

function outcomeOf(status: string | undefined): Regression['outcome'] {
  if (status === undefined) return 'missing';
  return status === 'skipped' || status === 'error' ? status : 'failed';
}
