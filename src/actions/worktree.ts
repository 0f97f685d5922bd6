import { cp } from 'node:fs/promises';
import { CallerError } from '../errors/errors.js';
import { assertWorkTreeRoot, git } from '../repo/git.js';
import { loadTask } from '../repo/tasks.js';
import { UndoLog } from '../repo/undo-log.js';
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
import { mergeRecordFile } from '../records/merge-record.js';
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
  const merged = await mergeRecordFile(repository, taskId);
  if (await pathExists(merged.state))
    throw new CallerError(
      `${taskId} was approved and merged already (${merged.display}): a worktree started now would ` +
        'branch from its old base, not from the merged code, and its records say approved. For ' +
        'more work on it, make a new task (coachgate task new), which starts from the code as it is.',
    );
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
 * passes in it and the caller confirmed the merge. Anything else, a failure part-way included, leaves
 * the worktree, the base branch and the records as they were.
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
  const undo = new UndoLog();
  try {
    const merged = await mergeApproved(repository, target, undo);
    if (!merged.merged) {
      await undoOrSay(undo, taskId);
      return { ...target, outcome: 'conflict', conflicts: merged.conflicts };
    }
    // The records (verdict log, review, runs) outlive the worktree: they are the audit trail.
    const records = taskDirectory(repository, taskId);
    const mirror = taskDirectory(target.path, taskId);
    if (await pathExists(mirror)) {
      await undo.beforeCopy(mirror, records);
      await cp(mirror, records, { recursive: true, force: true });
    }
    // Last: once the worktree is gone there is nothing left to fail.
    await removeTaskWorktree(repository, target);
    return { ...target, outcome: 'merged', commit: merged.commit, records_copied_to: records };
  } catch (error) {
    await undoOrSay(undo, taskId, error as Error);
    if (error instanceof CallerError) throw error;
    throw new CallerError(
      `${taskId} was not finished: ${(error as Error).message}. Everything finish had done is undone (the worktree's commit, the merge, the merge record).`,
      'Fix the cause, then finish again.',
    );
  }
}

/**
 * Commits the worktree, merges it and signs the merge record, each step undoable: the commit (index
 * included), the merge (the base branch back where it was) and the merge record's files.
 */
async function mergeApproved(repository: string, target: TaskWorktree, undo: UndoLog) {
  const worktree = git(target.path);
  const headBefore = (await worktree.revparse(['HEAD'])).trim();
  const index = (await worktree.raw(['write-tree'])).trim();
  undo.add(async () => {
    await worktree.raw(['reset', '-q', '--soft', headBefore]);
    await worktree.raw(['read-tree', index]);
  });
  await commitWorktree(target.path, `${target.task_id}: approved by coachgate`);
  const base = git(repository);
  const baseBefore = (await base.revparse(['HEAD'])).trim();
  const merge = await mergeTaskBranch(repository, target);
  if (!merge.merged) return merge;
  undo.add(async () => void (await base.raw(['reset', '-q', '--keep', baseBefore])));
  // Signed while the approved worktree still exists: the gate on the merged branch checks through it.
  const record = await mergeRecordFile(target.path, target.task_id);
  await undo.beforeWrite(record.state);
  await undo.beforeWrite(record.mirror);
  await recordTaskMerge(target.path, target.task_id, {
    commit: merge.commit,
    base_branch: target.base_branch,
  });
  return merge;
}

/** Undoes a finish that stopped part-way; what could not be undone is an error of its own. */
async function undoOrSay(undo: UndoLog, taskId: string, cause?: Error): Promise<void> {
  const failures = await undo.undo();
  if (failures.length === 0) return;
  throw new CallerError(
    `${taskId}: finish stopped${cause ? ` (${cause.message})` : ''}, and undoing it failed: ${failures.join('; ')}.`,
    'Check the base branch, the task worktree and .guardkit/autobuild/ with git status and git log.',
  );
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
  await assertWorkTreeRoot(repository);
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
