import { z } from 'zod';
import { detectStallForTask } from '../actions/task-status.js';
import { openTask } from '../actions/task-scope.js';
import { CallerError } from '../errors/errors.js';
import { detectStall, type StallReport } from '../verdicts/stall.js';
import { defineTool, READ_ONLY } from './tool.js';
import { StallSchema } from '../verdicts/coach-turn.js';
import { describeTampering, TamperingSchema, type Tampering } from '../records/mirrored.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';

export const detectStallTool = defineTool({
  name: 'detect_stall',
  title: 'Detect a stalled Player/Coach loop',
  description:
    'Detects a loop that is not converging: the same feedback (normalised: test ids, paths, line numbers, numbers, durations, hashes and timestamps removed) for stall_threshold turns without progress in criteria, the same failing tests 3 turns running, an unchanged tree between turns, or A-B-A-B oscillation. Only feedback given after a new Player turn counts: a verdict recorded again before the Player reports (player_turn not newer) is left out. Give worktree + task_id to evaluate the recorded verdict history, or history to replay a sequence statelessly.',
  input: z.object({
    worktree: worktreeInput.optional(),
    task_id: taskIdInput.optional(),
    history: z
      .array(
        z.object({
          feedback: z.string(),
          criteria_passed: z.number().int().min(0),
          failing_tests: z.array(z.string()).optional(),
          tree_hash: z.string().optional(),
          player_turn: z
            .number()
            .int()
            .min(0)
            .optional()
            .describe(
              'Latest Player turn when the feedback was given; an entry whose player_turn is not newer is left out.',
            ),
        }),
      )
      .max(10_000)
      .optional()
      .describe('Stateless replay: one entry per feedback turn, oldest first.'),
    threshold: z
      .number()
      .int()
      .min(2)
      .max(50)
      .optional()
      .describe(
        'For history replay (default 3; the recorded mode uses coachgate.stall_threshold).',
      ),
  }),
  output: StallSchema.extend({
    mirror_tampering: z
      .array(TamperingSchema)
      .optional()
      .describe(
        "For worktree + task_id: where .guardkit/autobuild/ differs from the server's copy the history was read from.",
      ),
  }),
  annotations: READ_ONLY,
  async run({ worktree, task_id, history, threshold }, context) {
    let report: StallReport & { mirror_tampering?: Tampering[] };
    if (history) {
      report = detectStall(history, { threshold: threshold ?? 3 });
    } else if (worktree && task_id) {
      report = await detectStallForTask(
        await openTask(await context.workspace.resolveWorktree(worktree), task_id, context.baseRef),
      );
    } else {
      throw new CallerError(
        'detect_stall needs either history, or worktree and task_id.',
        'Pass history: [{feedback, criteria_passed}] to replay, or the task to evaluate its recorded verdicts.',
      );
    }
    const tampering = report.mirror_tampering ?? [];
    const tampered =
      tampering.length > 0
        ? ` MIRROR TAMPERED: ${tampering.map(describeTampering).join('; ')}.`
        : '';
    return {
      data: report,
      summary:
        (report.stalled
          ? `STALLED at turn ${report.first_stalled_turn} (${report.reason}). ${report.recommendation}`
          : `Not stalled after ${report.signatures.length} turn(s).`) + tampered,
    };
  },
});
