import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { readJsonFile, type JsonFile } from './files.js';
import { artifactNames, taskDirectory, turnNumbers } from './paths.js';

export async function coachTurnNumbers(worktree: string, taskId: string): Promise<number[]> {
  const names = await readdir(taskDirectory(worktree, taskId)).catch(() => [] as string[]);
  return turnNumbers(names, 'coach_turn_');
}

export async function readCoachTurn(worktree: string, taskId: string, turn: number): Promise<JsonFile<{ feedback_for_player?: string; decision?: string }>> {
  return readJsonFile(path.join(taskDirectory(worktree, taskId), artifactNames.coachTurn(turn)));
}
