import { z } from 'zod';
import { recordVerdict } from '../actions/record-verdict.js';
import { openTask } from '../actions/task-scope.js';
import {
  AcknowledgedChangeSchema,
  AcknowledgedFindingSchema,
  AcknowledgedLeftOutSchema,
  AcknowledgedNullTurnSchema,
  AcknowledgedUnverifiedEnvironmentSchema,
  VerdictIssueSchema,
} from '../verdicts/verdict-entry.js';
import { defineTool } from './tool.js';
import { CriterionReportSchema, StallSchema } from '../verdicts/coach-turn.js';
import { evidenceInput } from './evidence-input.js';
import { EvaluationSchema } from '../evaluation/evaluation-record.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { whileTrustedRunsWait } from './trusted-wait.js';

export const recordVerdictTool = defineTool({
  name: 'record_verdict',
  title: "Record the Coach's verdict",
  description:
    'Records the Coach\'s decision for a turn. "approve" is REFUSED (isError, reasons listed, attempt logged) unless the server\'s own evidence supports it right now: the latest stored run passed on the current tree (failures that already failed at the base excepted), the trusted runs the server makes now pass — the base\'s own tests and test config on the Player\'s code in a clean snapshot (every base test that passed at the base still passes, unless acknowledged), cited tests fail on the base code (fail-to-pass), every added test file is collected, and no planted interpreter, site hook or .bin shim is present —, quality gates pass, every criterion is verified by evidence, the verdict lists no must_fix issue, check_test_integrity has no must_fix finding, a turn that changed no product file (a null turn) is acknowledged as one the base already does, and the task is not blocked. "feedback" costs a strike; max_strikes or a stalled loop blocks the task. Writes coach_turn_<N>.json, appends to the hash-chained verdicts.jsonl, rewrites review.md, and returns feedback_for_player.',
  input: z.object({
    worktree: worktreeInput,
    task_id: taskIdInput,
    turn: z
      .number()
      .int()
      .min(1)
      // No upper bound: the server accepts only the one legal turn, which must stay reachable after
      // the Player's last allowed turn (1000) and every review without a report.
      .describe(
        'The turn this verdict closes: the latest recorded Player turn (player_turn_<N>), or the next turn when reviewing without a report.',
      ),
    decision: z.enum(['approve', 'feedback']),
    rationale: z.string().min(1).max(20_000).describe('Why, in a few sentences.'),
    issues: z
      // Strict: a key the record has no place for (a criterion id as `requirement`) is refused, not
      // dropped without a word.
      .array(VerdictIssueSchema.strict())
      .max(200)
      .optional()
      .describe(
        'must_fix items block approval; info items go to "Beyond spec". Name the criterion an issue is about at the start of its description ("AC-003: …").',
      ),
    evidence: evidenceInput.optional(),
    acknowledged_changes: z
      .array(AcknowledgedChangeSchema)
      .max(200)
      .optional()
      .describe(
        'Base tests whose changed outcome a criterion asks for: their trusted-run failure does not block approval. Never covers a test that did not run, except those of a base test file the Player deleted, retired by giving that file as `test`.',
      ),
    acknowledged_left_out: z
      .array(AcknowledgedLeftOutSchema)
      .max(200)
      .optional()
      .describe(
        "Changes the trusted runs left out (evaluation.left_out: not product code by the base's rules) that the product needs, such as a data file it reads or a new dependency: the trusted runs take them from the Player too. Recorded and signed with the verdict.",
      ),
    acknowledged_findings: z
      .array(AcknowledgedFindingSchema)
      .max(200)
      .optional()
      .describe(
        'harness_reach findings (check_test_integrity) that are honest, each {file, line?, reason}: product code that reaches the test process on purpose, such as a logger wrapping stdout. They no longer block approval. Recorded and signed with the verdict.',
      ),
    acknowledged_null_turn: AcknowledgedNullTurnSchema.optional().describe(
      "For a null turn (evaluation.null_turn: the Player's tree differs from the base in no product file): the Coach's statement, with the criterion, that the base already does what the task asks. Without it such an approval is refused. Recorded and signed with the verdict.",
    ),
    acknowledged_unverified_environment:
      AcknowledgedUnverifiedEnvironmentSchema.optional().describe(
        'When the approval is refused as "environment unverified" (installed packages that nothing could compare with the tarball their registry publishes: no lockfile integrity, no copy in npm\'s cache): the Coach\'s statement of how the environment was installed. Recorded and signed with the verdict.',
      ),
  }),
  output: z.object({
    recorded: z.boolean(),
    decision: z.enum(['approve', 'feedback']),
    status: z.enum(['approved', 'in_progress', 'blocked']),
    strikes: z.number(),
    max_strikes: z.number(),
    path: z.string(),
    review_path: z.string(),
    feedback_for_player: z.string(),
    stall: StallSchema,
    requirements_status: z.array(CriterionReportSchema),
    evaluation: EvaluationSchema.nullable().describe(
      'The trusted runs behind an approval request; null for feedback or when no fresh candidate run exists.',
    ),
    timings: z
      .record(z.string(), z.number())
      .describe(
        "Seconds this call spent per step: each trusted run, snapshots, environment check, git, integrity, requirements, quality gates, records; trusted runs started with the candidate run count as the time waited for them. Steps overlap (runs go side by side), so they do not add up to the call's time.",
      ),
    trusted_runs_timings: z
      .record(z.string(), z.number())
      .describe(
        "Seconds per step of the trusted runs an approval rests on, wherever they were started (beside the candidate run, or by an earlier call): environment check, git, snapshots, each run. Where the turn's time went; empty for feedback.",
      ),
  }),
  longRunning: true,
  annotations: {
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  async run({ worktree, task_id, ...request }, context) {
    const scope = await openTask(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      context.baseRef,
    );
    const result = await whileTrustedRunsWait(context, (wait) =>
      recordVerdict(scope, request, wait),
    );
    const head =
      result.status === 'approved'
        ? `APPROVED ${task_id} at turn ${request.turn}.`
        : `Feedback recorded for ${task_id} turn ${request.turn}: strike ${result.strikes}/${result.max_strikes}, status ${result.status}${result.stall.stalled ? ` (stalled: ${result.stall.reason})` : ''}.`;
    return { data: result, summary: `${head} Review: ${result.review_path}.` };
  },
});
