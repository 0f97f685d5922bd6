import type { AcknowledgedChange, ApprovalFacts } from '../verdicts/approval-guard.js';
import type { EvidenceInput } from '../requirements/requirements.js';
import type { RunRecord } from '../records/run-record.js';
import type { LoadedTask } from '../repo/tasks.js';
import type { WaitOptions } from '../evaluation/early-runs.js';
import { evaluateCandidate, type Evaluation } from '../evaluation/evaluate.js';
import { saveEvaluation } from '../evaluation/stored-evaluation.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { linksIntoStore } from '../repo/runner-loaded.js';
import { describeTampering, type Tampering } from '../records/mirrored.js';
import type { JsonFile } from '../records/files.js';
import { latestRun } from '../records/runs.js';
import {
  plantedOf,
  readEnvironmentOnce,
  type PlantedFile,
  type UnverifiedPackage,
} from '../evaluation/planted-environment.js';
import { integrityAgainstBase, type IntegrityReport } from './check-test-integrity.js';
import { readTaskWorkResults, type TaskWorkResultsReport } from './read-task-work-results.js';
import type { TaskScope } from './task-scope.js';
import { validateRequirements, type RequirementsValidation } from './validate-requirements.js';
import { STEP, timed, type Steps } from '../evaluation/steps.js';
import { verifyQualityGates } from './verify-quality-gates.js';

/** The trusted evaluation of one stored run on one tree, made before the task lock is taken. */
export interface EvaluatedRun {
  run_id: string;
  tree: string;
  result: Evaluation;
  /** The approval's checks of the same tree, made while the trusted runs were awaited. */
  checks: TreeChecks;
}

/** What an approval reads of the worktree besides its runs. */
interface TreeChecks {
  integrity: IntegrityReport;
  links: string[];
  /** Installed packages nothing could compare with what their registry publishes. */
  unverified: UnverifiedPackage[];
}

/** Everything a verdict is decided on, gathered in one place. */
export interface VerdictEvidence {
  run: JsonFile<RunRecord>;
  report: TaskWorkResultsReport;
  current_tree: string;
  /** The trusted evaluation of exactly the latest run on the current tree; null otherwise. */
  evaluation: Evaluation | null;
  requirements: RequirementsValidation;
  /** What the approval guard reads; absent for feedback. */
  approval?: ApprovalFacts;
}

export interface EvidenceRequest {
  decision: 'approve' | 'feedback';
  evidence?: EvidenceInput[];
  issues: ApprovalFacts['verdict_issues'];
  acknowledged_changes: AcknowledgedChange[];
  acknowledged_findings: ApprovalFacts['acknowledged_findings'];
  acknowledged_null_turn: ApprovalFacts['acknowledged_null_turn'];
  acknowledged_unverified_environment: ApprovalFacts['acknowledged_unverified_environment'];
  task: LoadedTask;
  task_status: ApprovalFacts['task_status'];
  evaluated: EvaluatedRun | undefined;
  /** Changes to the worktree mirror seen before the lock repaired it. */
  tampering: Tampering[];
  steps?: Steps;
}

/**
 * How long to wait for the trusted runs, the tests the Coach cites (all, and those for kept
 * behaviour), and where the call's steps are counted.
 */
export type EvaluationOptions = WaitOptions & {
  keptTests?: string[];
  citedTests?: string[];
  steps?: Steps;
  /** The caller's one read of the environment (readEnvironmentOnce); read here when absent. */
  planted?: Promise<PlantedFile[]>;
};

/**
 * The trusted evaluation of the latest stored run, when that run describes the current tree. It runs
 * outside the task lock: it takes as long as the suite, and a Player report or another verdict must not
 * time out waiting for it. Runs started beside the candidate run are awaited, not repeated.
 */
export async function evaluateLatestRun(
  scope: TaskScope,
  acknowledgedPaths: string[],
  options: EvaluationOptions,
): Promise<EvaluatedRun | undefined> {
  // One read of the environment for the whole approval: the runs and the checks judge the same.
  const environment = readEnvironmentOnce(scope, options.steps);
  const planted = plantedOf(environment);
  const [evaluated, checks] = await Promise.all([
    latestRunEvaluation(scope, acknowledgedPaths, { ...options, planted }),
    // Mostly waiting for the trusted runs to end: the checks go in that wait, not after it.
    timed(options.steps, STEP.integrity, () => treeChecks(scope, environment)),
  ]);
  return evaluated && { ...evaluated, checks };
}

/**
 * The trusted runs' judgement of the latest stored run on the current tree (undefined when the tree
 * changed since): what record_verdict and validate_requirements both read, from the same runs.
 */
export async function latestRunEvaluation(
  scope: TaskScope,
  acknowledgedPaths: string[],
  options: EvaluationOptions,
): Promise<Omit<EvaluatedRun, 'checks'> | undefined> {
  const { worktree, taskId, config } = scope;
  const [run, tree] = await timed(options.steps, STEP.git, () =>
    Promise.all([latestRun(worktree, taskId), treeFingerprint(worktree)]),
  );
  if (run.state !== 'ok' || run.value.tree_hash !== tree) return undefined;
  const result = await evaluateCandidate({
    worktree,
    taskId,
    baseCommit: scope.base.commit,
    config,
    candidateTests: run.value.tests,
    candidateLoaded: run.value.changed_files_loaded,
    tree,
    acknowledgedPaths,
    ...options,
  });
  return { run_id: run.value.run_id, tree, result };
}

async function treeChecks(
  scope: TaskScope,
  environment = readEnvironmentOnce(scope),
): Promise<TreeChecks> {
  const [integrity, links, { unverified }] = await Promise.all([
    integrityAgainstBase(scope, scope.taskId, plantedOf(environment)),
    linksIntoStore(scope.worktree),
    environment,
  ]);
  return { integrity, links, unverified };
}

/**
 * Reads the stored facts under the task lock — latest run and the tree, the Player's report,
 * requirements with the Coach's evidence, the evaluation (kept beside its run) — and, for an approval,
 * gates, integrity, links into the store, mirror tampering and a moved base: one result for the guard.
 */
export async function gatherVerdictEvidence(
  scope: TaskScope,
  request: EvidenceRequest,
): Promise<VerdictEvidence> {
  const { worktree, taskId } = scope;
  const { steps } = request;
  const [run, report, currentTree] = await timed(steps, STEP.git, () =>
    Promise.all([
      latestRun(worktree, taskId),
      readTaskWorkResults(worktree, taskId),
      treeFingerprint(worktree),
    ]),
  );
  const { evaluated } = request;
  // Only an evaluation of exactly this run and tree counts; anything else leaves it null, which the
  // guard refuses for a fresh run.
  const evaluation =
    evaluated &&
    run.state === 'ok' &&
    run.value.run_id === evaluated.run_id &&
    currentTree === evaluated.tree
      ? evaluated.result
      : null;
  if (evaluation && run.state === 'ok') {
    await saveEvaluation(worktree, taskId, {
      run_id: run.value.run_id,
      tree_hash: currentTree,
      acknowledged_changes: request.acknowledged_changes,
      evaluation,
    });
  }
  const requirements = await timed(steps, STEP.requirements, () =>
    validateRequirements(scope, request.evidence ?? [], {
      run,
      task: request.task,
      report,
      ...(evaluation
        ? {
            passingOnBaseCode: evaluation.passing_on_base_code,
            keptBaseTests: evaluation.kept_base_tests ?? [],
          }
        : {}),
    }),
  );
  const evidence: VerdictEvidence = {
    run,
    report,
    current_tree: currentTree,
    evaluation,
    requirements,
  };
  if (request.decision !== 'approve') return evidence;
  // An evaluation counts only for the current tree, and its checks were made of that same tree.
  const [gates, { integrity, links, unverified }] = await Promise.all([
    timed(steps, STEP.gates, () => verifyQualityGates(scope, report)),
    evaluation && evaluated
      ? evaluated.checks
      : timed(steps, STEP.integrity, () => treeChecks(scope)),
  ]);
  evidence.approval = {
    task_status: request.task_status,
    run:
      run.state === 'ok'
        ? { state: 'ok', value: run.value }
        : run.state === 'corrupt'
          ? { state: 'corrupt', problem: run.problem }
          : { state: 'missing' },
    current_tree_hash: currentTree,
    gates,
    requirements,
    verdict_issues: request.issues,
    integrity: integrity.findings,
    honesty: report.found && report.results ? report.honesty : null,
    evaluation,
    acknowledged_changes: request.acknowledged_changes,
    acknowledged_findings: request.acknowledged_findings,
    acknowledged_null_turn: request.acknowledged_null_turn,
    environment_unverified: unverified,
    acknowledged_unverified_environment: request.acknowledged_unverified_environment,
    links_into_store: links,
    mirror_tampering: request.tampering.map(describeTampering),
    base_moved: scope.base_moved ? { task_id: taskId, ...scope.base_moved } : null,
  };
  return evidence;
}
