import path from 'node:path';
import { approvalRefusals, type AcknowledgedChange } from '../verdicts/approval-guard.js';
import type { CoachTurnRecord } from '../verdicts/coach-turn.js';
import { CallerError } from '../errors/errors.js';
import { assertKnownCriteria } from '../requirements/known-criteria.js';
import { boundedLines, MESSAGE_LIMIT } from '../errors/quote.js';
import { feedbackForPlayer } from '../verdicts/player-feedback.js';
import type { EvidenceInput } from '../requirements/requirements.js';
import { renderReview } from '../verdicts/review.js';
import { failingTests, type RunRecord } from '../records/run-record.js';
import { detectStall, type StallReport } from '../verdicts/stall.js';
import type {
  AcknowledgedFinding,
  AcknowledgedLeftOut,
  AcknowledgedNullTurn,
  AcknowledgedUnverifiedEnvironment,
  VerdictIssue,
  VerdictLogEntry,
} from '../verdicts/verdict-entry.js';
import { beadReviewPath } from '../repo/beads.js';
import { worktreeRelative } from '../repo/workspace.js';
import { loadTask } from '../repo/tasks.js';
import { writeFileAtomically } from '../records/files.js';
import { stateCoachTurnHeads, verdictsCut } from '../records/coach-turn-heads.js';
import { withTaskLock } from '../records/task-lock.js';
import { artifactNames, taskDirectory } from '../records/mirror-paths.js';
import { playerTurnNumbers } from '../records/player-turns.js';
import {
  assertWritable,
  mirrorTampering,
  taskRecordFile,
  writeMirrored,
} from '../records/mirrored.js';
import { appendVerdict, readVerdictLog, type NewVerdictLogEntry } from '../records/verdict-log.js';
import { stallHistory, taskState } from '../verdicts/task-state.js';
import type { TaskScope } from './task-scope.js';
import type { RequirementsValidation } from './validate-requirements.js';
import type { Evaluation } from '../evaluation/evaluate.js';
import { STEP, Steps } from '../evaluation/steps.js';
import type { LoadedTask } from '../repo/tasks.js';
import {
  evaluateLatestRun,
  gatherVerdictEvidence,
  type VerdictEvidence,
} from './verdict-evidence.js';

export interface VerdictRequest {
  turn: number;
  decision: 'approve' | 'feedback';
  rationale: string;
  issues?: VerdictIssue[];
  evidence?: EvidenceInput[];
  acknowledged_changes?: AcknowledgedChange[];
  acknowledged_left_out?: AcknowledgedLeftOut[];
  acknowledged_findings?: AcknowledgedFinding[];
  acknowledged_null_turn?: AcknowledgedNullTurn;
  acknowledged_unverified_environment?: AcknowledgedUnverifiedEnvironment;
}

export interface VerdictOptions {
  signal?: AbortSignal;
  /** Progress of the trusted runs an approval waits for: elapsed time, tests all runs finished. */
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
  /** Where the call's steps are counted; the caller reads the steps in progress from it. */
  steps?: Steps;
}

export interface VerdictResult {
  recorded: boolean;
  decision: 'approve' | 'feedback';
  status: 'approved' | 'in_progress' | 'blocked';
  strikes: number;
  max_strikes: number;
  path: string;
  review_path: string;
  feedback_for_player: string;
  stall: StallReport;
  requirements_status: RequirementsValidation['criteria'];
  /** The trusted runs behind an approval; null for feedback. */
  evaluation: Evaluation | null;
  /** Seconds per step of this call (src/evaluation/steps.ts); overlapping steps do not add up. */
  timings: Record<string, number>;
  /** Seconds per step of the trusted runs an approval rests on, wherever they were started. */
  trusted_runs_timings: Record<string, number>;
}

/**
 * Records the Coach's decision: gather the evidence, let the guard judge an approval, record. An approval
 * is re-evaluated from stored facts — latest run and its tree fingerprint, gates, requirements with
 * evidence, integrity, honesty, the trusted runs — and refused (logged, no verdict) unless all hold.
 * Feedback costs a strike; strikes or a stalled loop block the task.
 */
export async function recordVerdict(
  scope: TaskScope,
  request: VerdictRequest,
  options: VerdictOptions = {},
): Promise<VerdictResult> {
  const { worktree, taskId } = scope;
  const steps = options.steps ?? new Steps();
  const runSteps = new Steps();
  const { task, tampering, beadReview } = await steps.time(STEP.records, async () => ({
    task: await loadTask(worktree, taskId, scope.base.commit),
    // Seen before the lock repairs the mirror from the server's copy.
    tampering: await mirrorTampering(worktree, taskId),
    // Found before the lock: it may run `bd export`.
    beadReview: await beadReviewPath(worktree, taskId),
  }));
  checkNamedCriteria(task, request, taskId);
  const evaluated =
    request.decision === 'approve'
      ? await evaluateLatestRun(
          scope,
          (request.acknowledged_left_out ?? []).map((item) => item.file),
          {
            ...options,
            steps,
            runSteps,
            keptTests: (request.evidence ?? []).flatMap((item) =>
              item.kept && item.test ? [item.test] : [],
            ),
            citedTests: (request.evidence ?? []).flatMap((item) => (item.test ? [item.test] : [])),
          },
        )
      : undefined;

  return withTaskLock(worktree, taskId, async () => {
    const turn = await openTurn(scope, request);
    const reviewFile = await taskRecordFile(worktree, taskId, artifactNames.review);
    // A verdict writes three records: a link planted at any of them refuses the call before the first.
    await assertWritable(
      reviewFile,
      await taskRecordFile(worktree, taskId, artifactNames.verdictLog),
      await taskRecordFile(worktree, taskId, artifactNames.coachTurn(request.turn)),
    );
    const evidence = await gatherVerdictEvidence(scope, {
      decision: request.decision,
      ...(request.evidence ? { evidence: request.evidence } : {}),
      issues: request.issues ?? [],
      acknowledged_changes: request.acknowledged_changes ?? [],
      acknowledged_findings: request.acknowledged_findings ?? [],
      acknowledged_null_turn: request.acknowledged_null_turn,
      acknowledged_unverified_environment: request.acknowledged_unverified_environment,
      task,
      task_status: turn.state.status,
      evaluated,
      tampering,
      steps,
    });
    const verdict: VerdictInProgress = {
      scope,
      request,
      task,
      turn,
      evidence,
      writeReview: async (text) => {
        await writeMirrored(reviewFile, text);
        // A courtesy copy for the coach-gate skill: a link planted there is refused by the write,
        // and that refusal must not turn a recorded verdict into an error.
        if (beadReview) await writeFileAtomically(beadReview, text).catch(() => undefined);
      },
    };
    const reasons = evidence.approval ? approvalRefusals(evidence.approval) : [];
    if (reasons.length > 0) await refuseApproval(verdict, reasons);
    const result = await steps.time(STEP.records, () => recordDecision(verdict));
    return { ...result, timings: steps.seconds(), trusted_runs_timings: runSteps.seconds() };
  });
}

/** One verdict between its evidence and its records. */
interface VerdictInProgress {
  scope: TaskScope;
  request: VerdictRequest;
  task: LoadedTask;
  turn: OpenTurn;
  evidence: VerdictEvidence;
  writeReview(text: string): Promise<void>;
}

interface OpenTurn {
  log: Awaited<ReturnType<typeof readVerdictLog>>;
  state: ReturnType<typeof taskState>;
  last_player_turn: number;
}

/** Every criterion the request names (evidence, acknowledgements) is one of the task's. */
function checkNamedCriteria(task: LoadedTask, request: VerdictRequest, taskId: string): void {
  const criteria = task.acceptance_criteria;
  const acknowledged = [
    ...(request.acknowledged_changes ?? []).map((change) => change.criterion),
    ...(request.acknowledged_null_turn ? [request.acknowledged_null_turn.criterion] : []),
  ];
  for (const id of acknowledged) {
    if (!criteria.some((criterion) => criterion.id === id)) {
      throw new CallerError(
        `an acknowledgement names criterion ${JSON.stringify(id)}, which ${taskId} does not have.`,
        `Use one of: ${criteria.map((criterion) => criterion.id).join(', ')}.`,
      );
    }
  }
  assertKnownCriteria(
    taskId,
    criteria,
    (request.evidence ?? []).map((item) => item.criterion),
    'evidence[].criterion',
  );
}

/** The verdict log, read under the lock, and whether it takes a verdict for this turn. */
async function openTurn(scope: TaskScope, request: VerdictRequest): Promise<OpenTurn> {
  const { worktree, taskId } = scope;
  const log = await readVerdictLog(worktree, taskId);
  if (!log.chain.intact) {
    const file = await taskRecordFile(worktree, taskId, artifactNames.verdictLog);
    throw new CallerError(
      `No verdict was recorded: the server's record in the state directory, ${file.state}, is damaged (${log.chain.problems.join('; ')}).`,
      "Restore the task's files in the state directory from a backup (the worktree mirror is only a copy); task_status lists the problems.",
    );
  }
  // A turn's own record may be left from a server stopped before its verdict: it is rewritten now.
  const cut = verdictsCut(log.entries, await stateCoachTurnHeads(worktree, taskId), request.turn);
  if (cut.length > 0)
    throw new CallerError(
      `No verdict was recorded: ${cut.join('; ')}.`,
      "A person restores the task's files in the state directory from a backup (the worktree mirror is only a copy).",
    );
  const state = taskState(log.entries);
  const lastPlayerTurn = (await playerTurnNumbers(worktree, taskId)).at(-1) ?? 0;
  const turn = verdictTurn(state.last_turn, lastPlayerTurn);
  if (request.turn !== turn) {
    throw new CallerError(
      log.entries.some((entry) => entry.kind === 'verdict' && entry.turn === request.turn)
        ? `Turn ${request.turn} of ${taskId} already has a verdict.`
        : `Turn ${request.turn} is not the turn under review for ${taskId}: the verdict belongs to turn ${turn}.`,
      `A verdict's turn is the latest recorded Player turn (or the next one when the Coach reviews without a report): record turn ${turn}.`,
    );
  }
  if (state.status === 'approved')
    throw new CallerError(`${taskId} is already approved; no further verdicts are recorded.`);
  if (state.status === 'blocked' && request.decision === 'feedback') {
    throw new CallerError(
      `${taskId} is blocked (${state.block_reason}); no further feedback is recorded.`,
      'Escalate to a human: review.md has the failure pattern.',
    );
  }
  return { log, state, last_player_turn: lastPlayerTurn };
}

/** review.md for the verdict's current standing. */
function reviewText(
  verdict: VerdictInProgress,
  status: VerdictLogEntry['status'],
  strikes: number,
  history: VerdictLogEntry[],
  blocked?: { reason: string; recommendation: string },
): string {
  const { scope, request, task, evidence } = verdict;
  return renderReview({
    task_id: scope.taskId,
    title: task.title,
    status,
    strikes,
    max_strikes: scope.config.coachgate.max_strikes,
    turn: request.turn,
    decision: request.decision,
    rationale: request.rationale,
    history,
    requirements: evidence.requirements.criteria,
    issues: request.issues ?? [],
    acknowledged_changes: request.acknowledged_changes ?? [],
    preexisting_failures: evidence.evaluation?.preexisting_failures ?? [],
    ...(blocked ? { blocked } : {}),
  });
}

/** A refused approval is logged (no verdict) and shown in review.md, then reported to the Coach. */
async function refuseApproval(verdict: VerdictInProgress, reasons: string[]): Promise<never> {
  const { scope, request, turn } = verdict;
  const { state } = turn;
  const issues = request.issues ?? [];
  const attempt = await appendVerdict(
    scope.worktree,
    scope.taskId,
    entry(request, issues, state.status, state.strikes, { kind: 'refused_approval', reasons }),
  );
  await verdict.writeReview(
    reviewText(
      verdict,
      state.status,
      state.strikes,
      [...turn.log.entries, attempt],
      state.status === 'blocked' ? blockInfo(state.block_reason ?? 'blocked', null) : undefined,
    ),
  );
  const heading = `Approval refused for ${scope.taskId} turn ${request.turn} — the server's own evidence does not support it:`;
  const fix = `Nothing was recorded as a verdict (the attempt is logged, each reason whole in review.md). Fix the causes, or record decision "feedback" with these as issues.`;
  // Every reason keeps a share of what the text's limit leaves beside the heading and the fix.
  const room = MESSAGE_LIMIT - heading.length - fix.length - 2;
  const listed = boundedLines(
    reasons.map((reason) => `- ${reason}`),
    room,
    (count) => `- … and ${count} more reasons`,
  );
  throw new CallerError(`${heading}\n${listed}`, fix, { reasons });
}

/** The verdict's records: coach_turn_<N>.json, the signed log entry, review.md. */
async function recordDecision(
  verdict: VerdictInProgress,
): Promise<Omit<VerdictResult, 'timings' | 'trusted_runs_timings'>> {
  const { scope, request, turn, evidence } = verdict;
  const { worktree, taskId, config } = scope;
  const { log, state } = turn;
  const { run, requirements, evaluation, current_tree: currentTree } = evidence;
  const issues = request.issues ?? [];
  const acknowledged = request.acknowledged_changes ?? [];
  const runSummary =
    run.state === 'ok' ? { ...run.value, failing_tests: failingTests(run.value) } : null;
  const feedback = feedbackForPlayer({
    turn: request.turn,
    rationale: request.rationale,
    issues,
    latest_run: runSummary,
    requirements: requirements.criteria,
  });
  const strikes = state.strikes + (request.decision === 'feedback' ? 1 : 0);
  const stallInput = {
    feedback,
    criteria_passed: requirements.criteria_met,
    failing_tests: runSummary?.failing_tests ?? [],
    tree_hash: currentTree,
    player_turn: turn.last_player_turn,
  };
  const stall = detectStall(
    request.decision === 'feedback'
      ? [...stallHistory(log.entries), { ...stallInput, turn: request.turn }]
      : stallHistory(log.entries),
    { threshold: config.coachgate.stall_threshold },
  );
  const exhausted = request.decision === 'feedback' && strikes >= config.coachgate.max_strikes;
  const status =
    request.decision === 'approve'
      ? 'approved'
      : exhausted || stall.stalled
        ? 'blocked'
        : 'in_progress';
  const blockReason = exhausted
    ? `${strikes} feedback verdicts reached max_strikes (${config.coachgate.max_strikes})`
    : stall.stalled
      ? `loop stalled: ${stall.reason} since turn ${stall.first_stalled_turn}`
      : null;

  const coachTurnPath = path.join(
    taskDirectory(worktree, taskId),
    artifactNames.coachTurn(request.turn),
  );
  const coachTurn: CoachTurnRecord = {
    task_id: taskId,
    turn: request.turn,
    decision: request.decision,
    status,
    strikes,
    max_strikes: config.coachgate.max_strikes,
    rationale: request.rationale,
    issues,
    validation_results: {
      latest_run: run.state === 'ok' ? runEvidence(run.value, currentTree) : null,
      tree_hash: currentTree,
      evaluation,
    },
    requirements_status: requirements.criteria,
    feedback_for_player: feedback,
    stall,
    acknowledged_changes: acknowledged,
    ...(request.acknowledged_left_out?.length
      ? { acknowledged_left_out: request.acknowledged_left_out }
      : {}),
    ...(request.acknowledged_findings?.length
      ? { acknowledged_findings: request.acknowledged_findings }
      : {}),
    ...(request.acknowledged_null_turn
      ? { acknowledged_null_turn: request.acknowledged_null_turn }
      : {}),
    ...(request.acknowledged_unverified_environment
      ? { acknowledged_unverified_environment: request.acknowledged_unverified_environment }
      : {}),
    recorded_at: new Date().toISOString(),
    verdict_log_head: log.chain.head_sha256,
  };
  await writeMirrored(
    await taskRecordFile(worktree, taskId, artifactNames.coachTurn(request.turn)),
    `${JSON.stringify(coachTurn, null, 2)}\n`,
  );
  const recorded = await appendVerdict(
    worktree,
    taskId,
    entry(request, issues, status, strikes, {
      kind: 'verdict',
      ...(request.decision === 'approve' && run.state === 'ok' ? { run_id: run.value.run_id } : {}),
      // Signed with the entry, so the gate can accept a run whose only failures are these.
      ...(request.decision === 'approve' && evaluation?.preexisting_failures.length
        ? { preexisting_failures: evaluation.preexisting_failures }
        : {}),
      ...(blockReason ? { reasons: [blockReason] } : {}),
      stall_reason: stall.reason,
      ...(request.decision === 'feedback' ? { stall_input: stallInput } : {}),
    }),
  );
  await verdict.writeReview(
    reviewText(
      verdict,
      status,
      strikes,
      [...log.entries, recorded],
      blockReason ? blockInfo(blockReason, stall) : undefined,
    ),
  );
  return {
    recorded: true,
    decision: request.decision,
    status,
    strikes,
    max_strikes: config.coachgate.max_strikes,
    path: worktreeRelative(worktree, coachTurnPath),
    review_path: worktreeRelative(
      worktree,
      path.join(taskDirectory(worktree, taskId), artifactNames.review),
    ),
    feedback_for_player: request.decision === 'approve' ? '' : feedback,
    stall,
    requirements_status: requirements.criteria,
    evaluation,
  };
}

/** The latest recorded Player turn, or the next turn when the Coach reviews without a new report. */
function verdictTurn(lastVerdictTurn: number, lastPlayerTurn: number): number {
  return lastPlayerTurn > lastVerdictTurn ? lastPlayerTurn : lastVerdictTurn + 1;
}

function entry(
  request: VerdictRequest,
  issues: VerdictIssue[],
  status: VerdictLogEntry['status'],
  strikes: number,
  extra: Partial<NewVerdictLogEntry> & Pick<NewVerdictLogEntry, 'kind'>,
): NewVerdictLogEntry {
  const acknowledged = request.acknowledged_changes ?? [];
  const leftOut = request.acknowledged_left_out ?? [];
  const findings = request.acknowledged_findings ?? [];
  return {
    turn: request.turn,
    decision: request.decision,
    status,
    strikes,
    recorded_at: new Date().toISOString(),
    rationale: request.rationale,
    issues,
    ...(acknowledged.length > 0 ? { acknowledged_changes: acknowledged } : {}),
    ...(leftOut.length > 0 ? { acknowledged_left_out: leftOut } : {}),
    ...(findings.length > 0 ? { acknowledged_findings: findings } : {}),
    ...(request.acknowledged_null_turn
      ? { acknowledged_null_turn: request.acknowledged_null_turn }
      : {}),
    ...(request.acknowledged_unverified_environment
      ? { acknowledged_unverified_environment: request.acknowledged_unverified_environment }
      : {}),
    ...extra,
  };
}

function runEvidence(run: RunRecord, currentTree: string) {
  return {
    run_id: run.run_id,
    status: run.status,
    counts: run.counts,
    failure_class: run.failure_class,
    tree_hash: run.tree_hash,
    fresh: run.tree_hash === currentTree,
  };
}

function blockInfo(
  reason: string,
  stall: StallReport | null,
): { reason: string; recommendation: string } {
  return {
    reason,
    recommendation:
      stall?.stalled === true
        ? stall.recommendation
        : 'Stop the loop and escalate to a human: review the failure pattern above, then clarify the acceptance criteria, split the task, or fix the environment before another attempt.',
  };
}
