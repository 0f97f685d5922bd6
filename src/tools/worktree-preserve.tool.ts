import { z } from 'zod';
import { preserveTaskWorktree } from '../actions/worktree.js';
import { orNull } from '../records/portable-schema.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { worktreeFields } from './worktree-start.tool.js';

export const worktreePreserveTool = defineTool({
  name: 'worktree_preserve',
  title: 'Preserve a failed task worktree',
  description:
    "Commits the worktree's current state on autobuild/<TASK> (coachgate's records excluded) and keeps the worktree for a human, e.g. when the task is blocked.",
  input: z.object({
    worktree: worktreeInput.describe('The repository (main checkout) the task was started in.'),
    task_id: taskIdInput,
    reason: z
      .string()
      .min(1)
      .max(500)
      .describe('Why the task stopped; goes into the commit message.'),
  }),
  output: z.object({
    ...worktreeFields,
    commit: orNull(z.string()).describe('The commit made, or null when nothing had changed.'),
    reason: z.string(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async run({ worktree, task_id, reason }, context) {
    const kept = await preserveTaskWorktree(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      reason,
    );
    return {
      data: kept,
      summary: `Preserved ${kept.path} on ${kept.branch}${kept.commit ? ` (commit ${kept.commit.slice(0, 12)})` : ''}.`,
    };
  },
});
