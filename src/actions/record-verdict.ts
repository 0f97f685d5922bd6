import path from 'node:path';
import { approvalRefusals, type AcknowledgedChange } from '../core/approval-guard.js';
import type { CoachTurnRecord } from '../core/coach-turn.js';
import { CallerError } from '../core/errors.js';
import { feedbackForPlayer } from '../core/player-feedback.js';
import type { EvidenceInput } from '../core/requirements.js';
import { renderReview } from '../core/review.js';
import { failingTests, type RunRecord } from '../core/run-record.js';
import { detectStall, type StallReport } from '../core/stall.js';
import type { AcknowledgedLeftOut, VerdictIssue, VerdictLogEntry } from '../core/verdict-entry.js';
import { beadReviewPath } from '../repo/beads.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { linksIntoStore } from '../repo/runner-loaded.js';
import { worktreeRelative } from '../repo/workspace.js';
import { loadTask } from '../repo/tasks.js';
import { writeFileAtomically } from '../store/files.js';
import { withTaskLock } from '../store/lock.js';
import { artifactNames, taskDirectory } from '../store/paths.js';
import { latestRun } from '../store/runs.js';
import { playerTurnNumbers } from '../store/player-turns.js';
import {
  assertWritable,
  describeTampering,
  mirrorTampering,
  taskRecordFile,
  writeMirrored,
  type Tampering,
} from '../state/records.js';
import { appendVerdict, readVerdictLog, type NewVerdictLogEntry } from '../store/verdict-log.js';
import { evaluateCandidate, type Evaluation } from '../evaluation/evaluate.js';
import { saveEvaluation } from '../evaluation/stored-evaluation.js';
import { integrityAgainstBase } from './check-test-integrity.js';
import { readTaskWorkResults } from './read-task-work-results.js';
import { stallHistory, taskState } from '../core/task-state.js';
import type { TaskScope } from './task-scope.js';
import { validateRequirements, type RequirementsValidation } from './validate-requirements.js';
import { verifyQualityGates } from './verify-quality-gates.js';

export interface VerdictRequest {
  turn: number;
  decision: 'approve' | 'feedback';
  rationale: string;
  issues?: VerdictIssue[];
  evidence?: EvidenceInput[];
  acknowledged_changes?: AcknowledgedChange[];
  acknowledged_left_out?: AcknowledgedLeftOut[];
}

export interface VerdictOptions {
  signal?: AbortSignal;
  /** Progress of the trusted runs an approval starts. */
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
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
}

/**
 * Records the Coach's decision. An approval is re-evaluated from stored facts — latest run and its tree
 * fingerprint, gates, requirements with evidence, integrity, honesty — and refused (logged, no verdict)
 * unless all hold. Feedback costs a strike; strikes or a stalled loop block the task.
 */
export async function recordVerdict(
  scope: TaskScope,
  request: VerdictRequest,
  options: VerdictOptions = {},
): Promise<VerdictResult> {
  const { worktree, taskId, config } = scope;
  const issues = request.issues ?? [];
  const acknowledged = request.acknowledged_changes ?? [];
  const directory = taskDirectory(worktree, taskId);
  const reviewPath = path.join(directory, artifactNames.review);
  const task = await loadTask(worktree, taskId, scope.base.commit);
  // Seen before the lock repairs the mirror from the server's copy.
  const tampering = await mirrorTampering(worktree, taskId);
  // Found before the lock: it may run `bd export`.
  const beadReview = await beadReviewPath(worktree, taskId);
  for (const change of acknowledged) {
    if (!task.acceptance_criteria.some((criterion) => criterion.id === change.criterion)) {
      throw new CallerError(
        `acknowledged_changes names criterion ${JSON.stringify(change.criterion)}, which ${taskId} does not have.`,
        `Use one of: ${task.acceptance_criteria.map((criterion) => criterion.id).join(', ')}.`,
      );
    }
  }

  // The trusted runs happen lazily, for the tree being approved, and outside the task lock: they take as
  // long as the suite, and a Player report or another verdict must not time out waiting for them.
  const evaluated =
    request.decision === 'approve'
      ? await evaluateFreshRun(
          scope,
          (request.acknowledged_left_out ?? []).map((item) => item.file),
          options,
        )
      : undefined;

  return withTaskLock(worktree, taskId, async () => {
    const log = await readVerdictLog(worktree, taskId);
    if (!log.chain.intact) {
      throw new CallerError(
        `No verdict was recorded: ${worktreeRelative(worktree, path.join(directory, artifactNames.verdictLog))} is damaged (${log.chain.problems.join('; ')}).`,
        'Restore the file (e.g. from version control); task_status lists the problems.',
      );
    }
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

    const reviewFile = await taskRecordFile(worktree, taskId, artifactNames.review);
    // A verdict writes three records: a link planted at any of them refuses the call before the first.
    await assertWritable(
      reviewFile,
      await taskRecordFile(worktree, taskId, artifactNames.verdictLog),
      await taskRecordFile(worktree, taskId, artifactNames.coachTurn(request.turn)),
    );
    const [run, report] = await Promise.all([
      latestRun(worktree, taskId),
      readTaskWorkResults(worktree, taskId),
    ]);
    const currentTree = await treeFingerprint(worktree);
    // Only an evaluation of exactly this run and tree counts; anything else leaves it null, which the guard
    // refuses for a fresh run.
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
        acknowledged_changes: acknowledged,
        evaluation,
      });
    }
    const requirements = await validateRequirements(scope, request.evidence ?? [], {
      run,
      task,
      report,
      ...(evaluation ? { passingOnBaseCode: evaluation.passing_on_base_code } : {}),
    });
    const runSummary =
      run.state === 'ok' ? { ...run.value, failing_tests: failingTests(run.value) } : null;
    const review = async (
      status: VerdictLogEntry['status'],
      strikes: number,
      history: VerdictLogEntry[],
      blocked?: { reason: string; recommendation: string },
    ) => {
      const text = renderReview({
        task_id: taskId,
        title: task.title,
        status,
        strikes,
        max_strikes: config.coachgate.max_strikes,
        turn: request.turn,
        decision: request.decision,
        rationale: request.rationale,
        history,
        requirements: requirements.criteria,
        issues,
        acknowledged_changes: acknowledged,
        preexisting_failures: evaluation?.preexisting_failures ?? [],
        ...(blocked ? { blocked } : {}),
      });
      await writeMirrored(reviewFile, text);
      // A courtesy copy for the coach-gate skill: a link planted there is refused by the write, and that
      // refusal must not turn a recorded verdict into an error.
      if (beadReview) await writeFileAtomically(beadReview, text).catch(() => undefined);
    };

    if (request.decision === 'approve') {
      const [gates, integrity, links] = await Promise.all([
        verifyQualityGates(scope, report),
        integrityAgainstBase(scope, taskId),
        linksIntoStore(worktree),
      ]);
      const reasons = approvalRefusals({
        task_status: state.status,
        run:
          run.state === 'ok'
            ? { state: 'ok', value: run.value }
            : run.state === 'corrupt'
              ? { state: 'corrupt', problem: run.problem }
              : { state: 'missing' },
        current_tree_hash: currentTree,
        gates,
        requirements,
        verdict_issues: issues,
        integrity: integrity.findings,
        honesty: report.found && report.results ? report.honesty : null,
        evaluation,
        acknowledged_changes: acknowledged,
        links_into_store: links,
      });
      reasons.push(...tampering.map(tamperingReason));
      if (scope.base_moved) {
        reasons.push(
          `the base moved since ${taskId} was pinned (pinned ${scope.base_moved.pinned}, now resolves to ${scope.base_moved.resolved}): the task is evaluated against the pinned base; a person confirms a new base with \`coachgate task pin-base\`.`,
        );
      }
      if (reasons.length > 0) {
        const attempt = await appendVerdict(
          worktree,
          taskId,
          entry(request, issues, state.status, state.strikes, {
            kind: 'refused_approval',
            reasons,
          }),
        );
        await review(
          state.status,
          state.strikes,
          [...log.entries, attempt],
          state.status === 'blocked' ? blockInfo(state.block_reason ?? 'blocked', null) : undefined,
        );
        throw new CallerError(
          `Approval refused for ${taskId} turn ${request.turn} — the server's own evidence does not support it:\n${reasons.map((reason) => `- ${reason}`).join('\n')}`,
          'Nothing was recorded as a verdict (the attempt is logged). Fix the causes, or record decision "feedback" with these as issues.',
          { reasons },
        );
      }
    }

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
      player_turn: lastPlayerTurn,
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

    const coachTurnPath = path.join(directory, artifactNames.coachTurn(request.turn));
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
        ...(request.decision === 'approve' && run.state === 'ok'
          ? { run_id: run.value.run_id }
          : {}),
        // Signed with the entry, so the gate can accept a run whose only failures are these.
        ...(request.decision === 'approve' && evaluation?.preexisting_failures.length
          ? { preexisting_failures: evaluation.preexisting_failures }
          : {}),
        ...(blockReason ? { reasons: [blockReason] } : {}),
        stall_reason: stall.reason,
        ...(request.decision === 'feedback' ? { stall_input: stallInput } : {}),
      }),
    );
    await review(
      status,
      strikes,
      [...log.entries, recorded],
      blockReason ? blockInfo(blockReason, stall) : undefined,
    );
    return {
      recorded: true,
      decision: request.decision,
      status,
      strikes,
      max_strikes: config.coachgate.max_strikes,
      path: worktreeRelative(worktree, coachTurnPath),
      review_path: worktreeRelative(worktree, reviewPath),
      feedback_for_player: request.decision === 'approve' ? '' : feedback,
      stall,
      requirements_status: requirements.criteria,
      evaluation,
    };
  });
}

/** The latest recorded Player turn, or the next turn when the Coach reviews without a new report. */
function verdictTurn(lastVerdictTurn: number, lastPlayerTurn: number): number {
  return lastPlayerTurn > lastVerdictTurn ? lastPlayerTurn : lastVerdictTurn + 1;
}

function tamperingReason(finding: Tampering): string {
  return `the worktree mirror was changed: ${describeTampering(finding)}. The server's own copy was used and the mirror restored; find out who edited it.`;
}

/** The trusted evaluation of the latest stored run, when that run describes the current tree. */
async function evaluateFreshRun(
  scope: TaskScope,
  acknowledgedPaths: string[],
  options: VerdictOptions,
): Promise<{ run_id: string; tree: string; result: Evaluation } | undefined> {
  const { worktree, taskId, config } = scope;
  const [run, tree] = await Promise.all([latestRun(worktree, taskId), treeFingerprint(worktree)]);
  if (run.state !== 'ok' || run.value.tree_hash !== tree) return undefined;
  const result = await evaluateCandidate({
    worktree,
    taskId,
    baseCommit: scope.base.commit,
    config,
    candidateTests: run.value.tests,
    acknowledgedPaths,
    ...options,
  });
  return { run_id: run.value.run_id, tree, result };
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
