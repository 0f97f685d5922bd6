import type { GatesReport } from '../quality-gates/gates.js';
import {
  acknowledges,
  coveredRegression,
  explainWithTrustedRun,
  type ExplainedFinding,
  type IntegrityFinding,
} from '../integrity/integrity.js';
import { failingTests, type RunRecord } from '../records/run-record.js';
import {
  observationReason,
  repetitionReason,
  type ObservationFinding,
  type RepetitionFinding,
} from '../observation/observation-reason.js';

/** Everything the guard re-evaluates server-side at the moment an approval is requested. */
export interface ApprovalFacts {
  task_status: 'approved' | 'in_progress' | 'blocked';
  run:
    | { state: 'missing' }
    | { state: 'corrupt'; problem: string }
    | {
        state: 'ok';
        value: Pick<
          RunRecord,
          'run_id' | 'status' | 'tree_hash' | 'tree_clean' | 'failure_class' | 'counts' | 'tests'
        >;
      };
  current_tree_hash: string;
  gates: Pick<GatesReport, 'all_gates_passed' | 'failed_gates'>;
  requirements: {
    criteria_total: number;
    all_criteria_met: boolean;
    missing: string[];
    criteria: { id: string; status: string; evidence: { valid: boolean; problem?: string }[] }[];
  };
  verdict_issues: { severity: string; description: string; location?: string }[];
  integrity: IntegrityFinding[];
  honesty: { verified: boolean; missing_files: string[] } | null;
  /** The server's trusted runs for the current tree and latest run; null when none was made for them. */
  evaluation: EvaluationFacts | null;
  acknowledged_changes: AcknowledgedChange[];
  /** The Coach's statement that the base already does what the task asks (a null turn). */
  acknowledged_null_turn?: { criterion: string } | undefined;
  /** Installed packages nothing could compare with what their registry publishes. */
  environment_unverified?: { package: string; why: string }[];
  /** The Coach's statement that the unverified environment is the one the project installs. */
  acknowledged_unverified_environment?: { reason: string } | undefined;
  /** harness_reach findings the Coach acknowledged as honest (file, and line when given). */
  acknowledged_findings?: { file: string; line?: number }[];
  /** Worktree files that are links into the store, which the tree fingerprint cannot vouch for. */
  links_into_store: string[];
  /** Edits found in the worktree mirror of the server's records, described. */
  mirror_tampering?: string[];
  /** Set when the base ref no longer resolves to the commit the task was pinned to. */
  base_moved?: { task_id: string; pinned: string; resolved: string } | null;
}

/** What the guard reads of one evaluation (src/evaluation): planted files, PASS_TO_PASS, collection. */
export interface EvaluationFacts {
  /** Null when the trusted run did not happen (planted environment). */
  trusted: { status: string } | null;
  planted: { file: string; problem: string }[];
  regressions: {
    test: string;
    outcome: 'failed' | 'error' | 'skipped' | 'missing';
    message?: string;
  }[];
  uncollected_test_files: string[];
  /** The base's test files, data and config a run of the Player's code changed or removed. */
  test_files_written?: string[];
  /** Base tests that failed at the base and still fail: they do not make the candidate run a refusal. */
  preexisting_failures: string[];
  /** The candidate run's other failures, with how each ended in the base's run of its tests. */
  unshared_failures?: { test: string; at_base: string; values?: string; base_id?: string }[];
  /** The trusted runs took none of the Player's changed code: they judged nothing of theirs. */
  vacuous?: boolean;
  /** The Player's tree differs from the base in no product file. */
  null_turn?: boolean;
  /** Changed source files no rule took (named when the evaluation is vacuous). */
  unjudged_code?: string[];
  /** Changed files the Player's run imported that the trusted runs left out (not test-side). */
  unjudged_loaded?: string[];
  /** Start-up points the Player added or changed that no acknowledgement covers. */
  startup_changed?: string[];
  /** Changes the trusted runs took from the base instead of the Player (not product code). */
  left_out: { file: string; change: string }[];
  /** The Player's added tests that passed in the worktree but not with the base's test infrastructure. */
  diverging_new_tests: { test: string; trusted_outcome: string; responsible: string[] }[];
  /** Base tests that passed at the base and are not in the Player's run under their id. */
  gone_from_player_run?: string[];
  /** The tests' calls into the Player's changed code, replayed outside the harness. */
  observation?: { findings: ObservationFinding[] };
  /** The tests the change turned to passing, or cited, that failed when run a second time. */
  repetition?: { findings: RepetitionFinding[] };
}

/** The Coach's statement that a base test's changed outcome is what a criterion asks for. */
export interface AcknowledgedChange {
  test: string;
  criterion: string;
  reason: string;
}

/**
 * Why an approval must be refused; empty means the server's own evidence supports it. Each reason names the
 * check that failed and what to do about it. Every check runs, so the Coach sees all problems at once.
 */
export function approvalRefusals(facts: ApprovalFacts): string[] {
  const reasons: string[] = [];
  if (facts.task_status === 'blocked')
    reasons.push(
      'task is blocked (strikes exhausted or loop stalled): escalate to a human instead of approving.',
    );
  if (facts.task_status === 'approved')
    reasons.push('task is already approved: nothing more to approve.');
  reasons.push(...runReasons(facts));
  reasons.push(...facts.links_into_store.map(linkIntoStoreReason));
  if (!facts.gates.all_gates_passed)
    reasons.push(
      `quality gates failed: ${facts.gates.failed_gates.join('; ')}. Ask the Player to fix them and report again.`,
    );
  if (facts.honesty && !facts.honesty.verified) {
    reasons.push(
      `the Player's report claims files that do not exist: ${facts.honesty.missing_files.join(', ') || 'see read_task_work_results problems'}. Send feedback.`,
    );
  }
  reasons.push(...requirementReasons(facts.requirements));
  const mustFix = facts.verdict_issues.filter((issue) => issue.severity === 'must_fix');
  if (mustFix.length > 0) {
    reasons.push(
      `the verdict itself lists ${mustFix.length} must_fix issue(s) (${mustFix.map((issue) => issue.description).join('; ')}): send decision "feedback" instead.`,
    );
  }
  const covered = coveredRegression(
    facts.integrity,
    facts.acknowledged_changes.map((change) => change.test),
  );
  reasons.push(...evaluationReasons(facts.evaluation, facts.acknowledged_changes, covered));
  if (facts.evaluation?.null_turn && !facts.acknowledged_null_turn)
    reasons.push(nullTurnReason(facts.evaluation.left_out));
  const unverified = facts.environment_unverified ?? [];
  if (unverified.length > 0 && !facts.acknowledged_unverified_environment)
    reasons.push(unverifiedEnvironmentReason(unverified));
  const integrity: ExplainedFinding[] = facts.evaluation?.trusted
    ? explainWithTrustedRun(facts.integrity, {
        regressions: facts.evaluation.regressions,
        acknowledged: facts.acknowledged_changes.map((change) => change.test),
        candidate_tests: facts.run.state === 'ok' ? facts.run.value.tests : [],
        ...(facts.evaluation.gone_from_player_run
          ? { gone_from_player_run: facts.evaluation.gone_from_player_run }
          : {}),
      })
    : facts.integrity;
  const honest = (finding: ExplainedFinding) =>
    finding.kind === 'harness_reach' &&
    (facts.acknowledged_findings ?? []).some(
      (item) =>
        item.file === finding.file && (item.line === undefined || item.line === finding.line),
    );
  for (const finding of integrity.filter((item) => item.severity === 'must_fix' && !honest(item))) {
    const confirmed = finding.trusted_run ? ` (${finding.trusted_run.detail})` : '';
    reasons.push(
      `test integrity: ${finding.kind} in ${finding.file}${finding.line ? `:${finding.line}` : ''} — ${finding.detail}${confirmed}. Send feedback to undo it.`,
    );
  }
  for (const tampering of facts.mirror_tampering ?? []) {
    reasons.push(
      `the worktree mirror was changed: ${tampering}. The server's own copy was used and the mirror restored; find out who edited it.`,
    );
  }
  if (facts.base_moved) {
    const moved = facts.base_moved;
    reasons.push(
      `the base moved since ${moved.task_id} was pinned (pinned ${moved.pinned}, now resolves to ${moved.resolved}): the task is evaluated against the pinned base; a person confirms a new base with \`coachgate task pin-base\`.`,
    );
  }
  return reasons;
}

/** Also the gate's reason, so both say the same about a link into the store. */
export function linkIntoStoreReason(file: string): string {
  return `${file} is a symbolic link into .guardkit/autobuild/, where the server keeps its records: code there is not part of the tree a run describes and could change after an approval. Replace the link with the file itself.`;
}

/**
 * PASS_TO_PASS and collection, from the trusted runs. An acknowledged failure does not block; a test that
 * did not run at all cannot be acknowledged, since nothing shows what it would now say.
 */
function evaluationReasons(
  evaluation: EvaluationFacts | null,
  acknowledged: AcknowledgedChange[],
  covered: (regression: { test: string; outcome: string }) => boolean,
): string[] {
  if (!evaluation) return [];
  const reasons = evaluation.planted.map(
    (item) =>
      `planted environment: ${item.file} — ${item.problem}. The trusted runs did not start. Remove it (or reinstall the environment from the base's manifests), then ask again.`,
  );
  if (evaluation.vacuous) reasons.push(vacuousReason(evaluation.unjudged_code ?? []));
  const loaded = (evaluation.unjudged_loaded ?? []).filter(
    (file) => !(evaluation.vacuous && evaluation.unjudged_code?.includes(file)),
  );
  if (loaded.length > 0) reasons.push(unjudgedLoadedReason(loaded));
  const startup = evaluation.startup_changed ?? [];
  if (startup.length > 0) reasons.push(startupChangedReason(startup));
  const unloaded = new Map<string, string[]>();
  for (const regression of evaluation.regressions) {
    if (covered(regression)) continue;
    const shown = regression.message
      ? `: ${regression.message.replace(/\s+/g, ' ').slice(0, 200)}`
      : '';
    const cause = regression.outcome === 'missing' ? regression.message : undefined;
    if (cause) unloaded.set(cause, [...(unloaded.get(cause) ?? []), regression.test]);
    else
      reasons.push(
        regression.outcome === 'missing'
          ? `base test ${regression.test} passed at the base but did not run in the trusted run (base tests and config on your code): something in the code stops it from being collected. Restore what removed it; an acknowledgement cannot cover a test that did not run, unless its test file is one the Player deleted and a criterion retires it (acknowledged_changes [{test: <the deleted file>, criterion, reason}]).`
          : `base test ${regression.test} passed at the base but ${regression.outcome === 'skipped' ? 'was skipped' : regression.outcome === 'error' ? 'errored' : 'failed'} in the trusted run (base tests and config on your code)${shown}. Fix: restore the behaviour the test pins, or, if a criterion changes it, acknowledge it in record_verdict acknowledged_changes [{test, criterion, reason}].`,
      );
  }
  // Tests that did not run for one cause (their package did not build, their module did not load)
  // are one reason, with the cause, not one line each.
  for (const [cause, tests] of unloaded)
    reasons.push(
      `${tests.length === 1 ? 'base test' : `${tests.length} base tests`} ${listed(tests.slice(0, 3))}${tests.length > 3 ? ', …' : ''} passed at the base but did not run in the trusted run (base tests and config on your code): ${cause.replace(/\s+/g, ' ').slice(0, 300)}. Your code must keep what the base's tests use; an acknowledgement cannot cover a test that did not run.`,
    );
  // A failure may come from a change the trusted run left out: name them, and how to take one.
  const leftOut =
    evaluation.left_out.length > 0 && reasons.length > 0
      ? ` The trusted run took these changes from the base, not from you: ${listed(evaluation.left_out.map((item) => `${item.file} (${item.change})`))}; if the product needs one (a data file it reads, a dependency), acknowledge it in record_verdict acknowledged_left_out [{file, reason}].`
      : '';
  if (leftOut) reasons[reasons.length - 1] += leftOut;
  for (const item of evaluation.diverging_new_tests) {
    reasons.push(
      `new test ${item.test} passed in the worktree but ${item.trusted_outcome === 'missing' ? 'did not run' : item.trusted_outcome === 'skipped' ? 'was skipped' : item.trusted_outcome === 'error' ? 'errored' : 'failed'} with the base's test infrastructure on your code${item.responsible.length > 0 ? `: responsible is what the trusted run left out, ${listed(item.responsible)}` : ''}. Fix: make the test pass without changing the test setup (conftest, setup files, runner config).`,
    );
  }
  if (evaluation.test_files_written?.length)
    reasons.push(
      `the code under test wrote into the base's test files during the trusted runs: ${listed(evaluation.test_files_written)}. The base's tests, data and config judge the code; it must not change them. Find the write (a path under the tests, a golden file) and remove it.`,
    );
  for (const finding of evaluation.observation?.findings ?? []) {
    const stateAsked =
      finding.kind === 'depends_on_call_history' &&
      acknowledged.some((change) => change.test === finding.function);
    if (!stateAsked) reasons.push(observationReason(finding));
  }
  // A repetition its test's depends_on_call_history finding explains is that finding's to refuse.
  for (const finding of evaluation.repetition?.findings ?? []) {
    const stateAsked = acknowledges(
      acknowledged.map((change) => change.test),
      finding.test,
    );
    if (!finding.explained_by && !stateAsked) reasons.push(repetitionReason(finding));
  }
  for (const file of evaluation.uncollected_test_files) {
    reasons.push(
      `test file ${file} was added but contributes no test to the candidate run: the runner never collects it. Fix: move or rename it where the base's test config collects tests.`,
    );
  }
  return reasons;
}

/** Never "nothing was taken, so nothing was wrong": the refusal names the files and both ways out. */
function vacuousReason(files: string[]): string {
  const first = files[0] ?? 'the file';
  return `vacuous evaluation: the trusted runs took none of your changed code (${listed(files)}): no rule makes it code under test (no manifest declares it and no base test imports it), so the base's tests ran on the base's code and judged nothing of yours. If it is code the tests exercise, acknowledge it in record_verdict acknowledged_left_out, e.g. [{"file": "${first}", "reason": "the code the task changes"}]; if it is test support or tooling, revert it.`;
}

/**
 * Whatever passed, passed on the base's own code: an approval says the base already did the task, and
 * says it in so many words, so a turn that did nothing is never approved on code the base had.
 */
function nullTurnReason(leftOut: EvaluationFacts['left_out']): string {
  const taken =
    leftOut.length > 0
      ? ` If one of the changes the trusted runs left out (${listed(leftOut.map((item) => item.file))}) is the product's, acknowledge it in record_verdict acknowledged_left_out instead.`
      : '';
  return `null turn: your tree differs from the base in no product file, so every test passed on the base's own code. If the base already does what the task asks, say so in record_verdict acknowledged_null_turn {"criterion": "<criterion id>", "reason": "<how the base does it>"}; otherwise send feedback: the task is not done.${taken}`;
}

/**
 * The trusted runs borrow packages nobody compared with their registry's tarball: what they hold is
 * whatever was there, so the Coach says it is the project's own install, or it is reinstalled.
 */
function unverifiedEnvironmentReason(packages: { package: string; why: string }[]): string {
  const named = packages.slice(0, 5).map((item) => `${item.package} (${item.why})`);
  const more = packages.length > 5 ? ` and ${packages.length - 5} more` : '';
  return `environment unverified: the trusted runs borrow installed packages that nothing compared with what their registry publishes: ${named.join('; ')}${more}. Reinstall them from the base's lockfile where npm's cache can keep their tarballs (npm ci), or, if this is the environment the project installs, acknowledge it in record_verdict acknowledged_unverified_environment {"reason": "<how it was installed>"}.`;
}

/** The tests ran these files in the Player's run; the trusted runs ran the base's version. */
function unjudgedLoadedReason(files: string[]): string {
  return `changed code the tests load was not judged: your run of the tests loaded ${listed(files)} (imported it, or its code read it), but no rule makes ${files.length === 1 ? 'it' : 'them'} code under test, so the trusted runs used the base's version. If it is code the tests exercise, acknowledge it in record_verdict acknowledged_left_out, e.g. [{"file": "${files[0]}", "reason": "the code the task changes"}]; if it is test support or tooling, revert it.`;
}

function startupChangedReason(files: string[]): string {
  return `start-up point changed: ${listed(files)} ${files.length === 1 ? 'is' : 'are'} loaded by the runner's configuration before or around the tests (a setup file, a preload of the test script, a transform, an environment, a runner plugin), and your run ran your version while the trusted runs keep the base's. Revert it, or, if the task changes it, acknowledge it in record_verdict acknowledged_left_out, e.g. [{"file": "${files[0]}", "reason": "the start-up code the task changes"}].`;
}

function listed(items: string[]): string {
  return items.length > 10
    ? `${items.slice(0, 10).join(', ')} and ${items.length - 10} more`
    : items.join(', ');
}

/**
 * A red run whose every failure already failed at the base (and still does) is an honest run. The gate
 * asks the same of an approving run, with the list its approval recorded.
 */
export function onlyPreexistingFailures(
  run: Pick<RunRecord, 'status' | 'tests'>,
  preexisting: readonly string[],
): boolean {
  if (run.status !== 'failed') return false;
  const failing = failingTests(run);
  return failing.length > 0 && failing.every((id) => preexisting.includes(id));
}

function runReasons(facts: ApprovalFacts): string[] {
  const { run } = facts;
  if (run.state === 'missing')
    return [
      'no independent test run is stored for this task: call run_independent_tests with this task_id first.',
    ];
  if (run.state === 'corrupt')
    return [
      `the latest stored test run is unreadable (${run.problem}): run run_independent_tests again.`,
    ];
  const reasons: string[] = [];
  const { value } = run;
  const preexisting = facts.evaluation?.preexisting_failures ?? [];
  // A failure under a pre-existing failure's id may be another case (cases inserted before it):
  // the evaluation's unshared failures found each case at the base by its values.
  const unshared = facts.evaluation?.unshared_failures ?? [];
  if (
    value.status !== 'passed' &&
    (!onlyPreexistingFailures(value, preexisting) || unshared.length > 0)
  ) {
    reasons.push(
      `latest test run ${value.run_id} has status "${value.status}" (${value.counts.failed} failed, ${value.counts.errors} errors, failure class ${value.failure_class}): tests must pass before approval.${nothingRan(value) ? NOTHING_RAN : ''}${unsharedFailuresNamed(facts.evaluation?.unshared_failures)}`,
    );
  }
  if (value.tree_hash === facts.current_tree_hash && facts.evaluation === null) {
    reasons.push(
      `no trusted evaluation describes test run ${value.run_id} on the current tree (the tree or the run changed while it was being made): ask for the approval again.`,
    );
  }
  if (value.tree_hash !== facts.current_tree_hash) {
    reasons.push(
      value.tree_clean
        ? `the worktree changed after test run ${value.run_id}: the run no longer describes the code. Call run_independent_tests again.`
        : `test run ${value.run_id} changed the worktree itself (tree_clean: false), so it does not describe the current code: make the tests stop writing into the tree, then run them again.`,
    );
  }
  return reasons;
}

/** A run in which no test passed or failed: a crash, a collection error, setup errors only. */
function nothingRan(run: { status: string; counts: { passed: number; failed: number } }): boolean {
  return run.status === 'error' && run.counts.passed + run.counts.failed === 0;
}

/** Why such a run is refused even when every error is one the base shares. */
const NOTHING_RAN =
  ' No test ran to a verdict (a crash, a collection error, an error in every setup), so the run judged nothing, however the base fared: fix what its output names (often a module the environment lacks) and run the tests again.';

/** The red run's failures the base does not share, each with how it ended at the base. */
function unsharedFailuresNamed(failures: EvaluationFacts['unshared_failures']): string {
  if (!failures?.length) return '';
  const atBase = (outcome: string) =>
    outcome === 'not run'
      ? 'did not run at the base'
      : outcome === 'case moved'
        ? 'a case at a position that moved: the base has another case under this id'
        : `${outcome} at the base`;
  const named = failures.map(
    ({ test, at_base, values, base_id }) =>
      `${test} (${values ? `${values}: ` : ''}${atBase(at_base)}${base_id ? `, as ${base_id}` : ''})`,
  );
  const notRun = failures.some((failure) => failure.at_base === 'not run')
    ? " (a new test, or one the base's run never reached: only what failed there too is pre-existing)"
    : '';
  return ` Not failures the base shares: ${listed(named)}${notRun}.`;
}

function requirementReasons(requirements: ApprovalFacts['requirements']): string[] {
  if (requirements.criteria_total === 0)
    return [
      'the task has no acceptance criteria to verify: add a "## Acceptance Criteria" checklist to the task on the base branch.',
    ];
  if (requirements.all_criteria_met) return [];
  const unmet = new Set(requirements.missing);
  return requirements.criteria
    .filter((criterion) => unmet.has(criterion.id))
    .map((criterion) => {
      const problems = criterion.evidence
        .filter((item) => !item.valid)
        .map((item) => item.problem)
        .filter(Boolean);
      const why =
        criterion.status === 'missing'
          ? 'not claimed and no evidence'
          : problems.length > 0
            ? 'evidence does not hold'
            : 'claimed without evidence';
      return `criterion ${criterion.id} is not verified (${why}${problems.length ? `: ${problems.join('; ')}` : ''}): pass evidence (file + line + snippet, or a test that passed in the latest run).`;
    });
}
