import { CallerError } from '../errors/errors.js';
import { assertKnownCriteria } from '../requirements/known-criteria.js';
import { loadTask } from '../repo/tasks.js';
import {
  canonicalJson,
  PlayerReportSchema,
  type PlayerReport,
  type PlayerTurnRecord,
} from '../tasks/player-report.js';
import { withTaskLock } from '../records/task-lock.js';
import {
  playerTurnDisplay,
  playerTurnNumbers,
  readPlayerTurn,
  savePlayerTurn,
} from '../records/player-turns.js';
import { openTask } from './task-scope.js';

export interface RecordPlayerReportResult {
  recorded: boolean;
  already_recorded: boolean;
  turn: number;
  path: string;
}

/**
 * Writes `player_turn_<N>.json`. Turns are append-only: N must be the next turn, an identical re-send is a
 * no-op (a retried call must not fail), and a different report for a recorded turn is refused.
 */
export async function recordPlayerReport(
  worktree: string,
  taskId: string,
  turn: number,
  report: PlayerReport,
  baseRef?: string,
): Promise<RecordPlayerReportResult> {
  const scope = await openTask(worktree, taskId, baseRef);
  const normalised = PlayerReportSchema.parse(report);
  const task = await loadTask(worktree, taskId, scope.base.commit);
  assertKnownCriteria(
    taskId,
    task.acceptance_criteria,
    [
      ...normalised.requirements_addressed,
      ...normalised.requirements_remaining,
      ...(normalised.completion_promises ?? []).map((promise) => promise.criterion_id),
    ],
    'the report (requirements_addressed, requirements_remaining, completion_promises[].criterion_id)',
  );
  const relative = await playerTurnDisplay(worktree, taskId, turn);
  return withTaskLock(worktree, taskId, async () => {
    const turns = await playerTurnNumbers(worktree, taskId);
    const last = turns.at(-1) ?? 0;
    if (turns.includes(turn)) {
      const existing = await readPlayerTurn(worktree, taskId, turn);
      if (existing.state === 'corrupt')
        throw new CallerError(
          `${relative} exists but is corrupt (${existing.problem}).`,
          'Inspect or restore the file; coachgate will not overwrite a record.',
        );
      if (
        existing.state === 'ok' &&
        canonicalJson(stripRecordFields(existing.value)) === canonicalJson(normalised)
      ) {
        return { recorded: false, already_recorded: true, turn, path: relative };
      }
      throw new CallerError(
        `Turn ${turn} of ${taskId} is already recorded with a different report.`,
        `Records are append-only: send the next turn, ${last + 1}.`,
      );
    }
    if (turn !== last + 1) {
      throw new CallerError(
        `Turn ${turn} is out of order for ${taskId}: the last recorded Player turn is ${last}.`,
        `Send turn ${last + 1}.`,
      );
    }
    const record: PlayerTurnRecord = {
      task_id: taskId,
      turn,
      recorded_at: new Date().toISOString(),
      ...normalised,
    };
    await savePlayerTurn(worktree, taskId, record);
    return { recorded: true, already_recorded: false, turn, path: relative };
  });
}

function stripRecordFields(record: PlayerTurnRecord): PlayerReport {
  const { task_id: _taskId, turn: _turn, recorded_at: _recordedAt, ...report } = record;
  return PlayerReportSchema.parse(report);
}
