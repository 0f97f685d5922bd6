import { z } from 'zod';

/** The server's Ed25519 signature over the record's canonical JSON (sorted keys, without `signature`). */
export const SignatureFields = {
  key_id: z
    .string()
    .optional()
    .describe(
      'Id of the signing key: the first 16 hex digits of the SHA-256 of its public key (SPKI DER).',
    ),
  signature: z
    .string()
    .optional()
    .describe(
      'Base64 Ed25519 signature over the canonical JSON (sorted keys) of the record without this field.',
    ),
};

export const VerdictIssueSchema = z.object({
  severity: z.enum(['must_fix', 'should_fix', 'info']),
  category: z.string(),
  description: z.string(),
  location: z.string().optional().describe('`path:line` or `path`.'),
  suggestion: z.string().optional(),
});

export type VerdictIssue = z.infer<typeof VerdictIssueSchema>;

/** The Coach's statement that a base test's changed outcome is what a criterion asks for. */
export const AcknowledgedChangeSchema = z.object({
  test: z
    .string()
    .min(1)
    .describe(
      'A test id as the refusal lists it (or its tail after a separator, as for test evidence), or the function (file::name) a depends_on_call_history finding names.',
    ),
  criterion: z
    .string()
    .min(1)
    .describe('An acceptance criterion id of the task that asks for the change.'),
  reason: z.string().trim().min(1).describe('Why the old expectation no longer holds.'),
});

/**
 * The Coach's statement that a change the trusted runs left out (not product code by the base's rules)
 * is part of the work: a data file the product reads, a dependency in a manifest. The trusted runs then
 * take it from the Player too.
 */
export const AcknowledgedLeftOutSchema = z.object({
  file: z
    .string()
    .min(1)
    .describe("A path from the evaluation's left_out list, or a directory covering several."),
  reason: z.string().trim().min(1).describe('Why the product needs the change.'),
});

export type AcknowledgedLeftOut = z.infer<typeof AcknowledgedLeftOutSchema>;

export const AcknowledgedFindingSchema = z.object({
  file: z.string().min(1).describe('The file of a harness_reach finding (check_test_integrity).'),
  line: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("The finding's line; without it, every harness_reach finding in the file."),
  reason: z
    .string()
    .trim()
    .min(1)
    .describe('Why the product honestly does this (a logging library that wraps stdout).'),
});

export type AcknowledgedFinding = z.infer<typeof AcknowledgedFindingSchema>;

export const AcknowledgedNullTurnSchema = z.object({
  criterion: z
    .string()
    .min(1)
    .describe('The acceptance criterion id the base already meets, as the Coach verified.'),
  reason: z
    .string()
    .trim()
    .min(1)
    .describe("How the base's own code already does what the criterion asks."),
});

export type AcknowledgedNullTurn = z.infer<typeof AcknowledgedNullTurnSchema>;

export const AcknowledgedUnverifiedEnvironmentSchema = z.object({
  reason: z
    .string()
    .trim()
    .min(1)
    .describe(
      'How the borrowed environment was installed, as the Coach verified (a project that commits no lockfile, a git dependency).',
    ),
});

export type AcknowledgedUnverifiedEnvironment = z.infer<
  typeof AcknowledgedUnverifiedEnvironmentSchema
>;

/** SHA-256 hex of nothing yet: the `prev_sha256` of the first line. */
export const CHAIN_START = '0'.repeat(64);

/** Field order here is the order written to disk (seq first, the chain link last). */
export const VerdictLogEntrySchema = z
  .object({
    seq: z.number().int().min(1).describe('1, 2, 3... in file order.'),
    kind: z
      .enum(['verdict', 'refused_approval'])
      .describe('A refused approval is logged but is not a verdict and costs no strike.'),
    turn: z.number().int().min(1),
    decision: z.enum(['approve', 'feedback']),
    status: z
      .enum(['approved', 'in_progress', 'blocked'])
      .describe('Task status after this entry.'),
    strikes: z.number().int().min(0),
    recorded_at: z.string().describe('ISO 8601 time the server recorded the entry.'),
    rationale: z.string(),
    issues: z.array(VerdictIssueSchema),
    reasons: z
      .array(z.string())
      .optional()
      .describe('Why an approval was refused, or why the task was blocked.'),
    acknowledged_changes: z
      .array(AcknowledgedChangeSchema)
      .optional()
      .describe('Base-test failures the Coach acknowledged as asked for by a criterion.'),
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
    stall_reason: z.string().nullable().optional(),
    run_id: z.string().optional().describe('The run an approval rests on (the gate re-checks it).'),
    preexisting_failures: z
      .array(z.string())
      .optional()
      .describe(
        'Base tests that failed at the base and still fail: the approving run may fail with these alone.',
      ),
    stall_input: z
      .object({
        feedback: z.string(),
        criteria_passed: z.number().int().min(0),
        failing_tests: z.array(z.string()),
        tree_hash: z.string().optional(),
        player_turn: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe(
            'The latest Player turn recorded when the feedback was given (0: none); no_changes needs a newer one.',
          ),
      })
      .optional()
      .describe(
        'What stall detection compares across feedback verdicts (detect_stall replays these).',
      ),
    prev_sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .describe("SHA-256 (hex) of the previous line's exact text; 64 zeros for the first line."),
    anchored: z
      .literal(true)
      .optional()
      .describe(
        'Written by a server that keeps the signed head (verdicts-head.json): without it, the log was cut.',
      ),
    ...SignatureFields,
  })
  .describe(
    'One line of .guardkit/autobuild/<TASK>/verdicts.jsonl, an append-only hash-chained verdict history.',
  );

export type VerdictLogEntry = z.infer<typeof VerdictLogEntrySchema>;
