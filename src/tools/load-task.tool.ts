import { z } from 'zod';
import { loadTask } from '../actions/load-task.js';
import { defineTool, READ_ONLY } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';

export const loadTaskTool = defineTool({
  name: 'load_task',
  title: 'Load task requirements',
  description:
    'Reads a GuardKit task file (front matter + "## Acceptance Criteria") from the trusted base commit, so neither agent can rewrite the contract. Reports whether the working copy differs.',
  input: z.object({ worktree: worktreeInput, task_id: taskIdInput }),
  output: z.object({
    task_id: z.string(),
    title: z.string(),
    status: z.string(),
    task_type: z.string(),
    dependencies: z.array(z.string()),
    acceptance_criteria: z.array(
      z.object({ id: z.string(), text: z.string(), checked: z.boolean() }),
    ),
    requirements: z.string().describe('The task file as committed at the base commit.'),
    path: z.string(),
    base_commit: z.string(),
    modified_in_worktree: z.boolean(),
    warnings: z.array(z.string()),
  }),
  annotations: READ_ONLY,
  async run({ worktree, task_id }, context) {
    const task = await loadTask(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      context.baseRef,
    );
    const { id: _frontMatterId, ...data } = task;
    return {
      data,
      summary: `${task.task_id}: ${task.title} — ${task.acceptance_criteria.length} acceptance criteria (${task.path} at ${task.base_commit.slice(0, 12)}${task.modified_in_worktree ? '; MODIFIED in worktree' : ''}).`,
    };
  },
});
