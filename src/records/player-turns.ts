import { PlayerTurnRecordSchema, type PlayerTurnRecord } from '../tasks/player-report.js';
import { readStateCopy, stateRecordNames, taskRecordFile, writeMirrored } from './mirrored.js';
import { parseJsonRecord, type JsonFile } from './files.js';
import { artifactNames, turnNumbers } from './mirror-paths.js';

/** Player turns the server recorded (its own copy; a file planted in the mirror is not a turn). */
export async function playerTurnNumbers(worktree: string, taskId: string): Promise<number[]> {
  return turnNumbers(await stateRecordNames(worktree, taskId), 'player_turn_');
}

/** The worktree-relative mirror path of a turn, for messages. */
export async function playerTurnDisplay(
  worktree: string,
  taskId: string,
  turn: number,
): Promise<string> {
  return (await taskRecordFile(worktree, taskId, artifactNames.playerTurn(turn))).display;
}

/** A stored player turn, validated; a file that is not a valid record is reported as corrupt. */
export async function readPlayerTurn(
  worktree: string,
  taskId: string,
  turn: number,
): Promise<JsonFile<PlayerTurnRecord>> {
  const file = await taskRecordFile(worktree, taskId, artifactNames.playerTurn(turn));
  const parsed = parseJsonRecord(file.mirror, await readStateCopy(file));
  if (parsed.state !== 'ok') return parsed;
  const record = PlayerTurnRecordSchema.safeParse(parsed.value);
  if (!record.success)
    return {
      state: 'corrupt',
      path: file.mirror,
      problem: `not a player turn record: ${record.error.issues[0]?.message}`,
    };
  return { state: 'ok', path: file.mirror, value: record.data };
}

/** Writes the turn to the state directory and the mirror; the caller holds the task lock. */
export async function savePlayerTurn(
  worktree: string,
  taskId: string,
  record: PlayerTurnRecord,
): Promise<void> {
  await writeMirrored(
    await taskRecordFile(worktree, taskId, artifactNames.playerTurn(record.turn)),
    `${JSON.stringify(record, null, 2)}\n`,
  );
}
