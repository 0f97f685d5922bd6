import { z } from 'zod';
import { EvaluationSchema } from '../evaluation/evaluation-record.js';
import { FailureClassSchema, RunStatusSchema } from '../records/run-record.js';
import {
  AcknowledgedChangeSchema,
  AcknowledgedFindingSchema,
  AcknowledgedLeftOutSchema,
  AcknowledgedNullTurnSchema,
  AcknowledgedUnverifiedEnvironmentSchema,
  VerdictIssueSchema,
} from './verdict-entry.js';
import { orNull } from '../records/portable-schema.js';

export const EvidenceCheckSchema = z.object({
  criterion: z.string(),
  file: z.string().optional(),
  line: z.number().optional(),
  snippet: z.string().optional(),
  test: z.string().optional(),
  kept: z.boolean().optional(),
  source: z.enum(['coach', 'player_promise']),
  valid: z.boolean(),
  problem: z.string().optional(),
  matched_test: z.string().optional(),
});

export const CriterionReportSchema = z.object({
  id: z.string(),
  text: z.string(),
  status: z.enum(['verified', 'claimed_unverified', 'missing']),
  claimed_by: z.array(z.enum(['player', 'coach'])),
  evidence: z.array(EvidenceCheckSchema),
});

export const StallSchema = z.object({
  stalled: z.boolean(),
  reason: z.enum(['repeated_feedback', 'same_failures', 'no_changes', 'oscillation']).nullable(),
  first_stalled_turn: orNull(z.number()),
  signatures: z.array(z.string()),
  recommendation: z.string(),
});

/** `.guardkit/autobuild/<TASK>/coach_turn_<N>.json`, written by record_verdict (GuardKit's Coach turn record). */
export const CoachTurnRecordSchema = z
  .object({
    task_id: z.string(),
    turn: z.number().int().min(1),
    decision: z.enum(['approve', 'feedback']),
    status: z.enum(['approved', 'in_progress', 'blocked']),
    strikes: z.number().int().min(0),
    max_strikes: z.number().int().min(1),
    rationale: z.string(),
    issues: z.array(VerdictIssueSchema),
    validation_results: z.object({
      latest_run: z
        .object({
          run_id: z.string(),
          status: RunStatusSchema,
          counts: z.object({
            total: z.number(),
            passed: z.number(),
            failed: z.number(),
            errors: z.number(),
            skipped: z.number(),
          }),
          failure_class: FailureClassSchema,
          tree_hash: z.string(),
          fresh: z.boolean(),
        })
        .nullable(),
      tree_hash: z.string().describe('Worktree fingerprint when the verdict was recorded.'),
      evaluation: EvaluationSchema.nullable()
        .optional()
        .describe(
          'The trusted runs behind an approval: regressions, pre-existing failures, fail-to-pass.',
        ),
    }),
    requirements_status: z.array(CriterionReportSchema),
    feedback_for_player: z.string(),
    stall: StallSchema,
    acknowledged_changes: z
      .array(AcknowledgedChangeSchema)
      .optional()
      .describe('Changed base behaviour the Coach acknowledged.'),
    acknowledged_left_out: z
      .array(AcknowledgedLeftOutSchema)
      .optional()
      .describe('Left-out changes the Coach acknowledged, which the trusted runs then took.'),
    acknowledged_findings: z
      .array(AcknowledgedFindingSchema)
      .optional()
      .describe('harness_reach findings the Coach acknowledged as honest, with why.'),
    acknowledged_null_turn: AcknowledgedNullTurnSchema.optional().describe(
      "The Coach's statement that the base already does what the task asks (a turn that changed no product file).",
    ),
    acknowledged_unverified_environment:
      AcknowledgedUnverifiedEnvironmentSchema.optional().describe(
        "The Coach's statement that installed packages nothing could compare with their published content are the project's own install.",
      ),
    recorded_at: z.string(),
    verdict_log_head: z
      .string()
      .describe(
        'SHA-256 of the last verdicts.jsonl line before this verdict: detects a later edit of that line.',
      ),
  })
  .describe('Coach turn record (.guardkit/autobuild/<TASK>/coach_turn_<N>.json).');

export type CoachTurnRecord = z.infer<typeof CoachTurnRecordSchema>;
