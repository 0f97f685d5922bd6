import path from 'node:path';
import { describeSandbox } from '../config/sandbox-policy.js';
import { detectStall, type StallReport } from '../verdicts/stall.js';
import { chainState, stallHistory, taskState } from '../verdicts/task-state.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { worktreeRelative } from '../repo/workspace.js';
import { pathExists } from '../records/files.js';
import { loadTask } from '../repo/tasks.js';
import { artifactNames, taskDirectory } from '../records/mirror-paths.js';
import { playerTurnNumbers, readPlayerTurn } from '../records/player-turns.js';
import { latestRun } from '../records/runs.js';
import { readVerdictLog } from '../records/verdict-log.js';
import { mirrorTampering, type Tampering } from '../records/mirrored.js';
import type { TaskScope } from './task-scope.js';

/** The recorded history's stall report, and where the mirror differs from the copy it was read from. */
export async function detectStallForTask(
  scope: TaskScope,
): Promise<StallReport & { mirror_tampering: Tampering[] }> {
  const log = await readVerdictLog(scope.worktree, scope.taskId);
  const report = detectStall(stallHistory(log.entries), {
    threshold: scope.config.coachgate.stall_threshold,
  });
  return { ...report, mirror_tampering: await mirrorTampering(scope.worktree, scope.taskId) };
}

export interface TurnStatus {
  turn: number;
  player:
    | {
        tests_passed: boolean;
        files_changed: number;
        requirements_addressed: string[];
        concerns: string[];
      }
    | { problem: string }
    | null;
  coach: { decision: string; status: string; must_fix: number; recorded_at: string } | null;
  refused_approvals: number;
}

/** One view of a task's loop: turns, strikes, status, latest run, stall state and verdict-chain integrity. */
export async function taskStatus(scope: TaskScope) {
  const { worktree, taskId, config } = scope;
  const [task, log, run, playerTurns, tampering] = await Promise.all([
    loadTask(worktree, taskId, scope.base.commit),
    readVerdictLog(worktree, taskId),
    latestRun(worktree, taskId),
    playerTurnNumbers(worktree, taskId),
    mirrorTampering(worktree, taskId),
  ]);
  const state = chainState(taskState(log.entries), log.chain.intact);
  const turnNumbers = [
    ...new Set([...playerTurns, ...log.entries.map((entry) => entry.turn)]),
  ].sort((a, b) => a - b);
  const turns: TurnStatus[] = [];
  for (const turn of turnNumbers) {
    const player = await readPlayerTurn(worktree, taskId, turn);
    const verdict = log.entries.find((entry) => entry.kind === 'verdict' && entry.turn === turn);
    turns.push({
      turn,
      player:
        player.state === 'ok'
          ? {
              tests_passed: player.value.tests_passed,
              files_changed: new Set([
                ...player.value.files_created,
                ...player.value.files_modified,
              ]).size,
              requirements_addressed: player.value.requirements_addressed,
              concerns: player.value.concerns,
            }
          : player.state === 'corrupt'
            ? { problem: player.problem }
            : null,
      coach: verdict
        ? {
            decision: verdict.decision,
            status: verdict.status,
            must_fix: verdict.issues.filter((issue) => issue.severity === 'must_fix').length,
            recorded_at: verdict.recorded_at,
          }
        : null,
      refused_approvals: log.entries.filter(
        (entry) => entry.kind === 'refused_approval' && entry.turn === turn,
      ).length,
    });
  }
  const reviewPath = path.join(taskDirectory(worktree, taskId), artifactNames.review);
  const currentTree = run.state === 'ok' ? await treeFingerprint(worktree) : null;
  return {
    task_id: taskId,
    title: task.title,
    status: state.status,
    block_reason: state.block_reason,
    strikes: state.strikes,
    max_strikes: config.coachgate.max_strikes,
    turns,
    latest_run:
      run.state === 'ok'
        ? {
            run_id: run.value.run_id,
            status: run.value.status,
            counts: run.value.counts,
            failure_class: run.value.failure_class,
            fresh: run.value.tree_hash === currentTree,
            ...(run.value.sandbox ? { sandbox: describeSandbox(run.value.sandbox) } : {}),
            ...(run.value.sandbox?.warning ? { sandbox_warning: run.value.sandbox.warning } : {}),
          }
        : run.state === 'corrupt'
          ? { problem: `${run.path}: ${run.problem}` }
          : null,
    stall: detectStall(stallHistory(log.entries), { threshold: config.coachgate.stall_threshold }),
    verdict_chain: {
      intact: log.chain.intact,
      entries: log.entries.length,
      problems: log.chain.problems,
    },
    review_path: (await pathExists(reviewPath)) ? worktreeRelative(worktree, reviewPath) : null,
    base: { commit: scope.base.commit, source: scope.base.source },
    base_moved: scope.base_moved,
    mirror_tampering: tampering,
  };
}
