import { listTaskIds } from '../repo/tasks.js';
import type { Workspace } from '../repo/workspace.js';

/** MCP caps a completion answer at 100 values. */
const MAX_COMPLETIONS = 100;

/**
 * `task_id` completions for prompts (slash commands) and resource templates: the ids of the task files in
 * the given worktree (default: the first allowed root) that start with what was typed, case-insensitively.
 * A bad worktree completes nothing rather than failing the request.
 */
export async function completeTaskId(
  workspace: Workspace,
  typed: string,
  worktree = '.',
): Promise<string[]> {
  const root = await workspace.resolveWorktree(worktree).catch(() => undefined);
  if (!root) return [];
  const prefix = typed.toLowerCase();
  return (await listTaskIds(root))
    .filter((id) => id.toLowerCase().startsWith(prefix))
    .slice(0, MAX_COMPLETIONS);
}
