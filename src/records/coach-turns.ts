import { readStateCopy, stateRecordNames, taskRecordFile } from './mirrored.js';
import { parseJsonRecord, type JsonFile } from './files.js';
import { artifactNames, turnNumbers } from './mirror-paths.js';

export async function coachTurnNumbers(worktree: string, taskId: string): Promise<number[]> {
  return turnNumbers(await stateRecordNames(worktree, taskId), 'coach_turn_');
}

export async function readCoachTurn(
  worktree: string,
  taskId: string,
  turn: number,
): Promise<JsonFile<{ feedback_for_player?: string; decision?: string }>> {
  const file = await taskRecordFile(worktree, taskId, artifactNames.coachTurn(turn));
  return parseJsonRecord(file.mirror, await readStateCopy(file));
}
