import { readFile } from 'node:fs/promises';
import { CallerError } from '../errors/errors.js';
import { PACKAGE_ROOT } from '../package.js';
import { loadTask } from '../repo/tasks.js';
import { coachTurnNumbers, readCoachTurn } from '../records/coach-turns.js';
import { playerTurnNumbers } from '../records/player-turns.js';
import { mirrorTampering, tamperingSection } from '../records/mirrored.js';
import type { TaskScope } from './task-scope.js';

export const AGENT_ROLES = {
  player: 'autobuild-player',
  coach: 'autobuild-coach',
  validator: 'validator',
  'issue-verifier': 'issue-verifier',
} as const;
export type AgentRole = keyof typeof AGENT_ROLES;

const AGENTS_DIRECTORY = new URL('agents/', PACKAGE_ROOT);

/**
 * An agent's instructions (agents/<file>.md without front matter) followed by what this turn needs: the
 * task's requirements from the base commit, the turn number, the latest Coach feedback (the server's copy)
 * and any difference in the worktree mirror of the records.
 */
export async function buildAgentPrompt(
  role: AgentRole,
  scope: TaskScope,
  requestedTurn?: number,
): Promise<string> {
  const instructions = (
    await readFile(new URL(`${AGENT_ROLES[role]}.md`, AGENTS_DIRECTORY), 'utf8')
  )
    .replace(/^---\r?\n[\s\S]*?\r?\n---\r?\n/, '')
    .trim();
  const task = await loadTask(scope.worktree, scope.taskId, scope.base.commit);
  const playerTurns = await playerTurnNumbers(scope.worktree, scope.taskId);
  const lastPlayerTurn = playerTurns.at(-1) ?? 0;
  const turn =
    requestedTurn ?? (role === 'player' ? lastPlayerTurn + 1 : Math.max(lastPlayerTurn, 1));
  const feedback = await latestFeedback(scope);
  const tampering = tamperingSection(await mirrorTampering(scope.worktree, scope.taskId));
  return [
    instructions,
    `## This turn\nTask ${scope.taskId} in worktree ${scope.worktree}, turn ${turn}. Call coachgate tools with worktree "${scope.worktree}" and task_id "${scope.taskId}".`,
    `## Requirements (${task.path} at base commit ${task.base_commit.slice(0, 12)})\n\n${task.requirements.trim()}`,
    feedback
      ? `## Latest Coach feedback\n\n${feedback}`
      : '## Latest Coach feedback\n\nNone yet: this is the first review.',
    ...(tampering ? [tampering] : []),
  ].join('\n\n');
}

async function latestFeedback(scope: TaskScope): Promise<string | undefined> {
  const last = (await coachTurnNumbers(scope.worktree, scope.taskId)).at(-1);
  if (last === undefined) return undefined;
  const record = await readCoachTurn(scope.worktree, scope.taskId, last);
  if (record.state === 'corrupt')
    throw new CallerError(
      `coach_turn_${last}.json is corrupt (${record.problem}).`,
      'Restore it; task_status shows the history.',
    );
  return record.state === 'ok'
    ? record.value.feedback_for_player ||
        `Turn ${last}: ${record.value.decision ?? 'unknown decision'}.`
    : undefined;
}
