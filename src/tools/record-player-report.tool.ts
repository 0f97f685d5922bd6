import { z } from 'zod';
import { recordPlayerReport } from '../actions/record-player-report.js';
import { PlayerReportSchema } from '../tasks/player-report.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';

export const recordPlayerReportTool = defineTool({
  name: 'record_player_report',
  title: "Record the Player's turn report",
  description:
    "Stores the Player's report for turn N as .guardkit/autobuild/<TASK>/player_turn_<N>.json. Turns are append-only: N must be the next turn; re-sending an identical report is a no-op; a different report for a recorded turn is refused. The Player never declares completion: only the Coach's record_verdict can approve.",
  input: z.object({
    worktree: worktreeInput,
    task_id: taskIdInput,
    turn: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .describe('The turn number: 1 for the first Player turn, then the next one each time.'),
    report: PlayerReportSchema,
  }),
  output: z.object({
    recorded: z.boolean(),
    already_recorded: z.boolean(),
    turn: z.number(),
    path: z.string(),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async run({ worktree, task_id, turn, report }, context) {
    const result = await recordPlayerReport(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      turn,
      report,
      context.baseRef,
    );
    return {
      data: result,
      summary: result.recorded
        ? `Recorded Player turn ${turn} at ${result.path}.`
        : `Player turn ${turn} was already recorded with this report (${result.path}); nothing changed.`,
    };
  },
});
