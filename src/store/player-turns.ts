import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { PlayerTurnRecordSchema, type PlayerTurnRecord } from '../core/player-report.js';
import { readJsonFile, type JsonFile } from './files.js';
import { artifactNames, taskDirectory, turnNumbers } from './paths.js';

export async function playerTurnNumbers(worktree: string, taskId: string): Promise<number[]> {
  const names = await readdir(taskDirectory(worktree, taskId)).catch(() => [] as string[]);
  return turnNumbers(names, 'player_turn_');
}

export function playerTurnPath(worktree: string, taskId: string, turn: number): string {
  return path.join(taskDirectory(worktree, taskId), artifactNames.playerTurn(turn));
}

/** A stored player turn, validated; a file that is not a valid record is reported as corrupt. */
export async function readPlayerTurn(worktree: string, taskId: string, turn: number): Promise<JsonFile<PlayerTurnRecord>> {
  const file = await readJsonFile(playerTurnPath(worktree, taskId, turn));
  if (file.state !== 'ok') return file;
  const parsed = PlayerTurnRecordSchema.safeParse(file.value);
  if (!parsed.success) return { state: 'corrupt', path: file.path, problem: `not a player turn record: ${parsed.error.issues[0]?.message}` };
  return { state: 'ok', path: file.path, value: parsed.data };
}
