import { assertTaskId } from '../core/task-id.js';
import { assertRepository } from '../repo/git.js';
import { loadTrustedConfig, type TrustedConfig } from '../repo/trusted-config.js';

/** A checked worktree + task id with the configuration trusted for it. */
export interface TaskScope extends TrustedConfig {
  worktree: string;
  taskId: string;
}

export async function openRepository(worktree: string, baseRef?: string): Promise<TrustedConfig & { worktree: string }> {
  await assertRepository(worktree);
  return { worktree, ...(await loadTrustedConfig(worktree, baseRef)) };
}

export async function openTask(worktree: string, taskId: string, baseRef?: string): Promise<TaskScope> {
  assertTaskId(taskId);
  return { ...(await openRepository(worktree, baseRef)), taskId };
}
