import { readdir } from 'node:fs/promises';
import { CallerError } from '../core/errors.js';
import { assertTaskId } from '../core/task-id.js';
import { readStateCopy, taskRecordFile } from '../state/records.js';
import { parseJsonRecord } from '../store/files.js';
import { artifactNames, storeDirectory } from '../store/paths.js';
import { coachTurnNumbers } from '../store/coach-turns.js';
import { playerTurnNumbers } from '../store/player-turns.js';
import { storedRunIds } from '../store/runs.js';

/** Task ids that have records under .guardkit/autobuild/. */
export async function tasksWithRecords(worktree: string): Promise<string[]> {
  const entries = await readdir(storeDirectory(worktree), { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .sort();
}

/** review.md as the server wrote it (its own copy, not the worktree mirror). */
export async function reviewText(worktree: string, taskId: string): Promise<string> {
  const text = await readStateCopy(
    await taskRecordFile(worktree, assertTaskId(taskId), artifactNames.review),
  );
  if (text === undefined)
    throw new CallerError(`No review.md for ${taskId} yet.`, 'It is written by record_verdict.');
  return text;
}

/** A record from the server's copy; corrupt files are included as such. */
async function readRecord(
  worktree: string,
  taskId: string,
  name: string,
): Promise<Record<string, unknown>> {
  const file = parseJsonRecord<Record<string, unknown>>(
    name,
    await readStateCopy(await taskRecordFile(worktree, taskId, name)),
  );
  return file.state === 'ok'
    ? file.value
    : {
        file: name,
        state: file.state,
        ...(file.state === 'corrupt' ? { problem: file.problem } : {}),
      };
}

/** Every Player and Coach turn record, in turn order. */
export async function turnRecords(worktree: string, taskId: string) {
  assertTaskId(taskId);
  return {
    player: await Promise.all(
      (await playerTurnNumbers(worktree, taskId)).map((turn) =>
        readRecord(worktree, taskId, artifactNames.playerTurn(turn)),
      ),
    ),
    coach: await Promise.all(
      (await coachTurnNumbers(worktree, taskId)).map((turn) =>
        readRecord(worktree, taskId, artifactNames.coachTurn(turn)),
      ),
    ),
  };
}

/** Stored runs, newest first by the server's own order, without per-test lists (those stay in each run's file). */
export async function runRecords(worktree: string, taskId: string) {
  const ids = (await storedRunIds(worktree, assertTaskId(taskId))).reverse();
  return Promise.all(
    ids.map(async (id) => {
      const { tests: _tests, ...run } = await readRecord(
        worktree,
        taskId,
        `${artifactNames.runsDirectory}/${id}.json`,
      );
      return run;
    }),
  );
}
