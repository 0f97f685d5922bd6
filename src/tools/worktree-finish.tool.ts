import { z } from 'zod';
import { finishTaskWorktree } from '../actions/worktree.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { worktreeFields } from './worktree-start.tool.js';

export const worktreeFinishTool = defineTool({
  name: 'worktree_finish',
  title: 'Merge an approved task worktree',
  description:
    'Merges autobuild/<TASK> into its base branch and removes the worktree — only when `coachgate gate` passes in the worktree (approved verdict, fresh passing run, no cycle, build/typecheck/lint) and merge is true. A merge conflict is aborted, leaving every branch as it was. Coach/human only: merging changes the base branch.',
  input: z.object({
    worktree: worktreeInput.describe('The repository (main checkout) the task was started in.'),
    task_id: taskIdInput,
    merge: z
      .boolean()
      .describe('Confirms the merge. false only checks whether the task could be merged.'),
  }),
  output: z.object({
    ...worktreeFields,
    outcome: z.enum(['merged', 'gate_failed', 'not_confirmed', 'conflict']),
    commit: z.string().optional().describe('The merge commit, when merged.'),
    records_copied_to: z.string().optional(),
    reasons: z
      .array(z.string())
      .optional()
      .describe('Why the gate failed or the merge was not made.'),
    conflicts: z
      .array(z.string())
      .optional()
      .describe('Files that conflicted; the merge was aborted.'),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: false,
  },
  async run({ worktree, task_id, merge }, context) {
    const result = await finishTaskWorktree(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      merge,
    );
    const summary = {
      merged: () => `Merged ${result.branch} into ${result.base_branch}; worktree removed.`,
      gate_failed: () => `Not merged: the gate fails for ${task_id}. The worktree is kept.`,
      not_confirmed: () => `The gate passes for ${task_id}; call again with merge: true to merge.`,
      conflict: () =>
        `Merge of ${result.branch} into ${result.base_branch} conflicted and was aborted (${'conflicts' in result ? result.conflicts.join(', ') : ''}). Nothing changed; the worktree is kept.`,
    }[result.outcome]();
    return { data: result, summary };
  },
});
