import { z } from 'zod';
import { SignatureFields } from '../verdicts/verdict-entry.js';
import { orNull } from './portable-schema.js';
import { NETWORK_MODES, SANDBOX_MODES } from '../config/sandbox-policy.js';

/**
 * One independent test run, as returned by run_independent_tests and stored in
 * `.guardkit/autobuild/<TASK>/runs/<run_id>.json`. The approval guard trusts only this record.
 */
export const TestStatusSchema = z.enum(['passed', 'failed', 'error', 'skipped']);
export const RunStatusSchema = z.enum(['passed', 'failed', 'error', 'timeout', 'no_tests']);
export const FailureClassSchema = z.enum([
  'none',
  'code',
  'infrastructure',
  'collection',
  'timeout',
  'no_tests',
  'environment',
  'lint',
  'build',
]);

export const RunRecordSchema = z
  .object({
    run_id: z.string().describe('Sortable by time: later runs have greater ids.'),
    task_id: orNull(z.string()),
    started_at: z.string(),
    command: z.array(z.string()).describe('The argv actually run.'),
    detected_by: z.string(),
    cwd: z.string(),
    status: RunStatusSchema.describe(
      '"passed" only when the exit code is 0, at least one test passed and none failed.',
    ),
    exit_code: z.number().int().nullable(),
    signal: orNull(z.string()),
    timed_out: z.boolean(),
    cancelled: z.boolean(),
    duration_ms: z.number(),
    counts: z.object({
      total: z.number(),
      passed: z.number(),
      failed: z.number(),
      errors: z.number(),
      skipped: z.number(),
    }),
    tests: z.array(
      z.object({
        id: z.string(),
        status: TestStatusSchema,
        message: z.string().optional(),
        case: z
          .object({ function: z.string(), values: z.string() })
          .optional()
          .describe(
            "A parametrized case's test function and parameter values (pytest): how the case is " +
              "matched with the base's run when inserted or removed cases moved its positional id.",
          ),
      }),
    ),
    tests_source: z
      .string()
      .optional()
      .describe(
        'How the per-test results were obtained; "none" when this run has no per-test results (counts only).',
      ),
    failures_only: z
      .object({
        files: z
          .array(z.string())
          .describe(
            'The test files the runner ran, as it named them (uvu: relative to its directory).',
          ),
        failing: z
          .array(z.string())
          .describe('Every failing test it named (`name`, `suite > name`).'),
      })
      .optional()
      .describe(
        'Present when the runner names failing tests only (uvu): `tests` is empty, and a test ' +
          'cited by name is checked as not failing and written in one of these files.',
      ),
    changed_files_loaded: z
      .array(z.string())
      .optional()
      .describe(
        "Files changed since the base commit whose modules the tests imported (listed by pytest's reporter, and by coachgate's recorder in node --test and mocha processes): an approval is refused when the trusted runs took none of their changes' code.",
      ),
    summary: z
      .string()
      .describe(
        'At most 1500 characters: the first error with its context, then the final result lines.',
      ),
    failure_class: FailureClassSchema,
    advice: z.string(),
    env: z.object({
      shell: z.string(),
      interpreter: z.string().optional(),
      path_prefix: z.array(z.string()),
      notes: z.array(z.string()),
    }),
    tree_hash: z
      .string()
      .describe(
        'Fingerprint of the worktree when the run started (tracked + untracked, minus ignored files and .guardkit/autobuild).',
      ),
    tree_clean: z.boolean().describe('False when the run itself changed the worktree.'),
    baseline: z
      .object({
        base_commit: z.string(),
        status: RunStatusSchema,
        cached: z.boolean(),
        tests_total: z.number().describe('Tests the base commit collected.'),
        new_failures: z.array(z.string()),
        preexisting_failures: z.array(z.string()),
      })
      .optional(),
    sandbox: z
      .object({
        backend: z.enum(['bubblewrap', 'sandbox-exec', 'none']),
        mode: z.enum([...SANDBOX_MODES, 'unsandboxed']),
        network: z.enum(NETWORK_MODES),
        warning: z
          .string()
          .optional()
          .describe("Present when the tests ran unconfined, with the server's full authority."),
      })
      .optional()
      .describe('The sandbox the tests ran in (docs/sandbox.md); absent on older records.'),
    log_path: z.string().describe('The full output.'),
    output_bytes: z.number(),
    ...SignatureFields,
  })
  .describe('Test run record (.guardkit/autobuild/<TASK>/runs/<run_id>.json).');

export type RunRecord = z.infer<typeof RunRecordSchema>;

/** Whether a run lists its tests by id (records written before `tests_source` existed: when it lists any). */
export function hasPerTestResults(run: Pick<RunRecord, 'tests' | 'tests_source'>): boolean {
  return run.tests_source === undefined ? run.tests.length > 0 : run.tests_source !== 'none';
}

/** Failing test ids of a run (failed or errored). */
export function failingTests(run: Pick<RunRecord, 'tests'>): string[] {
  return run.tests
    .filter((test) => test.status === 'failed' || test.status === 'error')
    .map((test) => test.id);
}
