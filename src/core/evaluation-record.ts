import { z } from 'zod';
import { AcknowledgedChangeSchema } from './verdict-entry.js';

/** One approval evaluation as record_verdict returns it and coach_turn_N.json keeps it (src/evaluation/evaluate.ts). */
export const EvaluationSchema = z.object({
  base_commit: z.string(),
  command: z.array(z.string()),
  planted: z
    .array(z.object({ file: z.string(), problem: z.string() }))
    .describe(
      "Files that would run the Player's code inside the trusted runs; when any is listed, no run started.",
    ),
  baseline: z
    .object({ status: z.string(), cached: z.boolean(), tests_total: z.number() })
    .nullable()
    .describe('Base tests on the base code.'),
  trusted: z
    .object({ status: z.string(), tests_total: z.number() })
    .nullable()
    .describe("Base tests and config on the Player's code."),
  regressions: z.array(
    z.object({
      test: z.string(),
      outcome: z.enum(['failed', 'error', 'skipped', 'missing']),
      message: z.string().optional(),
    }),
  ),
  preexisting_failures: z.array(z.string()),
  passing_on_base_code: z
    .array(z.string())
    .describe("Tests that pass when the Player's tests run on the base code."),
  uncollected_test_files: z.array(z.string()),
});

/**
 * The trusted evaluation an approval attempt made, kept beside its run (`runs/<run_id>.evaluation.json`)
 * so check_test_integrity can show which static findings the running confirmed or explained away.
 */
export const StoredEvaluationSchema = z.object({
  run_id: z.string(),
  tree_hash: z.string().describe('Tree fingerprint the evaluation describes.'),
  acknowledged_changes: z.array(AcknowledgedChangeSchema),
  evaluation: EvaluationSchema,
});
