import { z } from 'zod';
import { taskStatus } from '../actions/task-status.js';
import { openTask } from '../actions/task-scope.js';
import { BaseMovedSchema } from '../records/pinned-base.js';
import { describeTampering, TamperingSchema } from '../records/mirrored.js';
import { defineTool, READ_ONLY } from './tool.js';
import { StallSchema } from '../verdicts/coach-turn.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { orNull } from '../records/portable-schema.js';

const counts = z.object({
  total: z.number(),
  passed: z.number(),
  failed: z.number(),
  errors: z.number(),
  skipped: z.number(),
});

export const taskStatusTool = defineTool({
  name: 'task_status',
  title: 'Task loop status',
  description:
    "Summarises a task's Player/Coach loop from its records: each turn's Player report and Coach decision (and refused approvals), strikes, status (in_progress / approved / blocked), the latest independent run and whether it still matches the tree, stall state, and whether the verdicts.jsonl hash chain is intact.",
  input: z.object({ worktree: worktreeInput, task_id: taskIdInput }),
  output: z.object({
    task_id: z.string(),
    title: z.string(),
    status: z.enum(['approved', 'in_progress', 'blocked']),
    block_reason: orNull(z.string()),
    strikes: z.number(),
    max_strikes: z.number(),
    turns: z.array(
      z.object({
        turn: z.number(),
        player: z
          .union([
            z.object({
              tests_passed: z.boolean(),
              files_changed: z.number(),
              requirements_addressed: z.array(z.string()),
              concerns: z.array(z.string()),
            }),
            z.object({ problem: z.string() }),
          ])
          .nullable(),
        coach: z
          .object({
            decision: z.string(),
            status: z.string(),
            must_fix: z.number(),
            recorded_at: z.string(),
          })
          .nullable(),
        refused_approvals: z.number(),
      }),
    ),
    latest_run: z
      .union([
        z.object({
          run_id: z.string(),
          status: z.string(),
          counts,
          failure_class: z.string(),
          fresh: z.boolean(),
          sandbox: z
            .string()
            .optional()
            .describe(
              'The sandbox the run had: backend and network, or NOT SANDBOXED and why (absent on older records).',
            ),
          sandbox_warning: z
            .string()
            .optional()
            .describe('Present when the run was not sandboxed (docs/sandbox.md).'),
        }),
        z.object({ problem: z.string() }),
      ])
      .nullable(),
    stall: StallSchema,
    verdict_chain: z.object({
      intact: z.boolean(),
      entries: z.number(),
      problems: z.array(z.string()),
    }),
    review_path: orNull(z.string()),
    base: z
      .object({ commit: z.string(), source: z.string() })
      .describe('The base commit the task is evaluated against (pinned on first touch).'),
    base_moved: BaseMovedSchema,
    mirror_tampering: z
      .array(TamperingSchema)
      .describe(
        "Where .guardkit/autobuild/<TASK>/ differs from the server's own copy (which every decision reads).",
      ),
  }),
  annotations: READ_ONLY,
  async run({ worktree, task_id }, context) {
    const status = await taskStatus(
      await openTask(await context.workspace.resolveWorktree(worktree), task_id, context.baseRef),
    );
    const chain = status.verdict_chain.intact
      ? ''
      : ` VERDICT CHAIN BROKEN: ${status.verdict_chain.problems.join('; ')}.`;
    const tampered =
      status.mirror_tampering.length > 0
        ? ` MIRROR TAMPERED: ${status.mirror_tampering.map(describeTampering).join('; ')}.`
        : '';
    const moved = status.base_moved
      ? ` BASE MOVED: pinned ${status.base_moved.pinned.slice(0, 12)}, now resolves to ${status.base_moved.resolved.slice(0, 12)}.`
      : '';
    return {
      data: status,
      summary: `${task_id}: ${status.status}, ${status.turns.length} turn(s), strikes ${status.strikes}/${status.max_strikes}${status.stall.stalled ? `, stalled (${status.stall.reason})` : ''}.${chain}${moved}${tampered}`,
    };
  },
});
