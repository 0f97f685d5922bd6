import { cp } from 'node:fs/promises';
import { CallerError } from '../core/errors.js';
import { loadTask } from '../repo/tasks.js';
import {
  addTaskWorktree,
  commitWorktree,
  currentBranch,
  mergeTaskBranch,
  recordedBaseBranch,
  removeTaskWorktree,
  taskWorktree,
  type TaskWorktree,
} from '../repo/worktrees.js';
import { pathExists } from '../records/files.js';
import { taskDirectory } from '../records/mirror-paths.js';
import { gateDecision } from './gate.js';
import { recordTaskMerge } from './gate-merge.js';
import { openTask } from './task-scope.js';

export interface WorktreeStart extends TaskWorktree {
  created: boolean;
  base_commit: string;
}

/**
 * Starts a task in its own worktree, branched from the pinned base (pinned now if the task has no pin
 * yet, so a `main` moved later cannot choose it); starting again returns the same one.
 */
export async function startTaskWorktree(
  repository: string,
  taskId: string,
  baseRef?: string,
): Promise<WorktreeStart> {
  const scope = await openTask(repository, taskId, baseRef);
  await loadTask(repository, taskId, scope.base.commit);
  const started = await addTaskWorktree(
    repository,
    taskId,
    scope.base.commit,
    await currentBranch(repository),
  );
  return { ...started, base_commit: scope.base.commit };
}

export type WorktreeFinish = TaskWorktree &
  (
    | { outcome: 'merged'; commit: string; records_copied_to: string }
    | { outcome: 'gate_failed'; reasons: string[] }
    | { outcome: 'not_confirmed'; reasons: string[] }
    | { outcome: 'conflict'; conflicts: string[] }
  );

/**
 * Merges an approved task into its base branch and removes the worktree, but only when `coachgate gate`
 * passes in it and the caller confirmed the merge. Anything else leaves the worktree as it is.
 */
export async function finishTaskWorktree(
  repository: string,
  taskId: string,
  confirmMerge: boolean,
): Promise<WorktreeFinish> {
  const target = await existingWorktree(repository, taskId);
  const gate = await gateDecision(await openTask(target.path, taskId));
  if (!gate.pass) return { ...target, outcome: 'gate_failed', reasons: gate.reasons };
  if (!confirmMerge)
    return {
      ...target,
      outcome: 'not_confirmed',
      reasons: [
        'the gate passes, but the merge was not confirmed (pass --auto-merge, or merge: true)',
      ],
    };
  await commitWorktree(target.path, `${taskId}: approved by coachgate`);
  const merge = await mergeTaskBranch(repository, target);
  if (!merge.merged) return { ...target, outcome: 'conflict', conflicts: merge.conflicts };
  // Signed while the approved worktree still exists: the gate on the merged branch checks through it.
  await recordTaskMerge(target.path, taskId, {
    commit: merge.commit,
    base_branch: target.base_branch,
  });
  // The records (verdict log, review, runs) outlive the worktree: they are the audit trail of the merge.
  const records = taskDirectory(repository, taskId);
  if (await pathExists(taskDirectory(target.path, taskId)))
    await cp(taskDirectory(target.path, taskId), records, { recursive: true, force: true });
  await removeTaskWorktree(repository, target);
  return { ...target, outcome: 'merged', commit: merge.commit, records_copied_to: records };
}

/** Keeps a failed task's worktree for a human, with its work committed on the task branch so none is lost. */
export async function preserveTaskWorktree(
  repository: string,
  taskId: string,
  reason: string,
): Promise<TaskWorktree & { commit: string | null; reason: string }> {
  const target = await existingWorktree(repository, taskId);
  const commit = await commitWorktree(target.path, `${taskId}: preserved by coachgate (${reason})`);
  return { ...target, commit, reason };
}

async function existingWorktree(repository: string, taskId: string): Promise<TaskWorktree> {
  const baseBranch = await recordedBaseBranch(repository, taskId);
  const target = taskWorktree(repository, taskId, baseBranch ?? '');
  if (!baseBranch || !(await pathExists(target.path))) {
    throw new CallerError(
      `${taskId} has no worktree started by coachgate in ${repository}.`,
      `Start one first: coachgate worktree start --task ${taskId}.`,
    );
  }
  return target;
}
