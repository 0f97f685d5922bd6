import { readdir } from 'node:fs/promises';
import { CallerError } from '../errors/errors.js';
import { assertTaskId } from '../tasks/task-id.js';
import {
  mirrorTampering,
  readStateCopy,
  stateRecordNames,
  tamperingSection,
  taskRecordFile,
} from '../records/mirrored.js';
import { tasksStateDirectory } from '../records/state-directory.js';
import { parseJsonRecord } from '../records/files.js';
import { artifactNames, storeDirectory } from '../records/mirror-paths.js';
import { coachTurnNumbers } from '../records/coach-turns.js';
import { playerTurnNumbers } from '../records/player-turns.js';
import { storedRunIds } from '../records/runs.js';

/** Task ids with records in the server's copy or the mirror (a deleted mirror hides no task). */
export async function tasksWithRecords(worktree: string): Promise<string[]> {
  const [inState, inMirror] = await Promise.all(
    [await tasksStateDirectory(worktree), storeDirectory(worktree)].map(async (directory) =>
      (await readdir(directory, { withFileTypes: true }).catch(() => []))
        .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
        .map((entry) => entry.name),
    ),
  );
  // A task the server only pinned a base for has no records yet.
  const recorded = [];
  for (const id of inState!)
    if ((await stateRecordNames(worktree, id)).length > 0) recorded.push(id);
  return [...new Set([...recorded, ...inMirror!])].sort();
}

/**
 * review.md as the server wrote it (its own copy, not the worktree mirror), headed by every difference
 * in the mirror, so a reader of the resource learns the branch's copy was edited.
 */
export async function reviewText(worktree: string, taskId: string): Promise<string> {
  const text = await readStateCopy(
    await taskRecordFile(worktree, assertTaskId(taskId), artifactNames.review),
  );
  if (text === undefined)
    throw new CallerError(`No review.md for ${taskId} yet.`, 'It is written by record_verdict.');
  const tampering = tamperingSection(await mirrorTampering(worktree, taskId));
  return tampering ? `${tampering}\n\n${text}` : text;
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

/** Every Player and Coach turn record, in turn order, and where the mirror differs (as task_status). */
export async function turnRecords(worktree: string, taskId: string) {
  assertTaskId(taskId);
  return {
    mirror_tampering: await mirrorTampering(worktree, taskId),
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

/**
 * Stored runs, newest first by the server's own order, without per-test lists (those stay in each run's
 * file), and where the mirror differs (as task_status).
 */
export async function runRecords(worktree: string, taskId: string) {
  const ids = (await storedRunIds(worktree, assertTaskId(taskId))).reverse();
  const runs = await Promise.all(
    ids.map(async (id) => {
      const { tests: _tests, ...run } = await readRecord(
        worktree,
        taskId,
        `${artifactNames.runsDirectory}/${id}.json`,
      );
      return run;
    }),
  );
  return { runs, mirror_tampering: await mirrorTampering(worktree, taskId) };
}
