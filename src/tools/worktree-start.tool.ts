import { z } from 'zod';
import { startTaskWorktree } from '../actions/worktree.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';

/** The fields every worktree tool returns. */
export const worktreeFields = {
  task_id: z.string(),
  path: z.string().describe('The task worktree: <repository>/.guardkit/worktrees/<TASK>.'),
  branch: z.string().describe('autobuild/<TASK>'),
  base_branch: z.string().describe('The branch the task started from and merges into.'),
};

export const worktreeStartTool = defineTool({
  name: 'worktree_start',
  title: 'Start a task worktree',
  description:
    'Creates .guardkit/worktrees/<TASK> on a new branch autobuild/<TASK> from the pinned base commit, so the Player works apart from the main checkout. Calling it again returns the existing worktree.',
  input: z.object({
    worktree: worktreeInput.describe('The repository (main checkout) to start the task in.'),
    task_id: taskIdInput,
  }),
  output: z.object({ ...worktreeFields, created: z.boolean(), base_commit: z.string() }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async run({ worktree, task_id }, context) {
    const started = await startTaskWorktree(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      context.baseRef,
    );
    return {
      data: started,
      summary: `${started.created ? 'Started' : 'Already started:'} ${task_id} in ${started.path} on ${started.branch} (base ${started.base_commit.slice(0, 12)}).`,
    };
  },
});
