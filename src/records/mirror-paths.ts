import path from 'node:path';
import { assertTaskId } from '../tasks/task-id.js';

/** coachgate's records, worktree-relative (GuardKit's layout); never part of the Player's work. */
export const STORE_PREFIX = '.guardkit/autobuild/';

/** Where the coach-gate skill reads a bead task's review (`.beads/artifacts/<BEAD>/review.md`). */
const BEAD_REVIEW = /^\.beads\/artifacts\/[^/]+\/review\.md$/;

/** Worktree-relative files the server writes: its store and bead reviews, never the Player's work. */
export function isServerWritten(file: string): boolean {
  return file.startsWith(STORE_PREFIX) || BEAD_REVIEW.test(file);
}

export function storeDirectory(worktree: string): string {
  return path.join(worktree, STORE_PREFIX);
}

/** Where coachgate keeps a task's records: `.guardkit/autobuild/<TASK>/`. */
export function taskDirectory(worktree: string, taskId: string): string {
  return path.join(storeDirectory(worktree), assertTaskId(taskId));
}

export const artifactNames = {
  taskWorkResults: 'task_work_results.json',
  playerTurn: (turn: number) => `player_turn_${turn}.json`,
  coachTurn: (turn: number) => `coach_turn_${turn}.json`,
  verdictLog: 'verdicts.jsonl',
  verdictHead: 'verdicts-head.json',
  review: 'review.md',
  runsDirectory: 'runs',
  mergeRecord: 'merged.json',
};

/** Turn numbers of files named like `player_turn_<N>.json`, ascending. */
export function turnNumbers(fileNames: string[], prefix: 'player_turn_' | 'coach_turn_'): number[] {
  const pattern = new RegExp(`^${prefix}(\\d+)\\.json$`);
  return fileNames
    .map((name) => pattern.exec(name)?.[1])
    .filter((turn): turn is string => turn !== undefined)
    .map(Number)
    .sort((a, b) => a - b);
}
