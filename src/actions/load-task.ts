import { loadTask as loadTaskAtBase, type LoadedTask } from '../repo/tasks.js';
import { openTask } from './task-scope.js';

export interface LoadTaskResult extends LoadedTask {
  warnings: string[];
}

export async function loadTask(
  worktree: string,
  taskId: string,
  baseRef?: string,
): Promise<LoadTaskResult> {
  const scope = await openTask(worktree, taskId, baseRef);
  const task = await loadTaskAtBase(worktree, taskId, scope.base.commit);
  const warnings = [...scope.warnings];
  if (task.id && task.id !== taskId)
    warnings.push(`front matter id ${task.id} differs from the requested ${taskId}`);
  if (task.modified_in_worktree)
    warnings.push(
      `${task.path} differs in the working tree; the base-commit version is the contract`,
    );
  if (task.acceptance_criteria.length === 0)
    warnings.push(`${task.path} has no "## Acceptance Criteria" checklist`);
  return { ...task, warnings };
}
