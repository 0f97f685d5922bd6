import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../core/errors.js';
import { assertTaskId } from '../core/task-id.js';
import { readJsonFile } from '../store/files.js';
import { artifactNames, storeDirectory, taskDirectory } from '../store/paths.js';
import { coachTurnNumbers } from '../store/coach-turns.js';
import { playerTurnNumbers } from '../store/player-turns.js';
import { runsDirectory } from '../store/runs.js';
import { readRegularFile } from '../repo/read-text.js';

/** Task ids that have records under .guardkit/autobuild/. */
export async function tasksWithRecords(worktree: string): Promise<string[]> {
  const entries = await readdir(storeDirectory(worktree), { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory() && !entry.name.startsWith('.')).map((entry) => entry.name).sort();
}

export async function reviewText(worktree: string, taskId: string): Promise<string> {
  const file = path.join(taskDirectory(worktree, assertTaskId(taskId)), artifactNames.review);
  return readRegularFile(file).catch(() => {
    throw new CallerError(`No review.md for ${taskId} yet.`, 'It is written by record_verdict.');
  });
}

/** Every Player and Coach turn record, in turn order; corrupt files are included as such. */
export async function turnRecords(worktree: string, taskId: string) {
  const directory = taskDirectory(worktree, assertTaskId(taskId));
  const read = async (name: string) => {
    const file = await readJsonFile(path.join(directory, name));
    return file.state === 'ok' ? file.value : { file: name, state: file.state, ...(file.state === 'corrupt' ? { problem: file.problem } : {}) };
  };
  return {
    player: await Promise.all((await playerTurnNumbers(worktree, taskId)).map((turn) => read(artifactNames.playerTurn(turn)))),
    coach: await Promise.all((await coachTurnNumbers(worktree, taskId)).map((turn) => read(artifactNames.coachTurn(turn)))),
  };
}

/** Stored runs, newest first, without per-test lists (those stay in each run's file). */
export async function runRecords(worktree: string, taskId: string) {
  const directory = runsDirectory(worktree, assertTaskId(taskId));
  const names = (await readdir(directory).catch(() => [] as string[])).filter((name) => name.endsWith('.json')).sort().reverse();
  return Promise.all(
    names.map(async (name) => {
      const file = await readJsonFile<Record<string, unknown>>(path.join(directory, name));
      if (file.state !== 'ok') return { file: name, state: file.state, ...(file.state === 'corrupt' ? { problem: file.problem } : {}) };
      const { tests: _tests, ...run } = file.value;
      return run;
    }),
  );
}
