import { z } from 'zod';
import { AcknowledgedChangeSchema } from '../verdicts/verdict-entry.js';

/** The tests' calls into the Player's changed code, replayed outside the harness (src/observation/). */
const ObservationSchema = z
  .object({
    calls_recorded: z.number(),
    cut: z
      .boolean()
      .describe('True when the record reached its bound: later calls were not observed.'),
    calls_compared: z.number(),
    import_failed: z.array(z.string()),
    findings: z.array(
      z.object({
        kind: z.enum(['differs_outside_tests', 'depends_on_call_history']),
        function: z.string().describe('file::qualified name'),
        test: z.string(),
        arguments: z.string(),
        in_tests: z.string(),
        outside: z.string(),
        again: z.string().optional(),
        calls: z.number(),
      }),
    ),
  })
  .describe(
    "The trusted run's calls from the base's tests into functions of the Player's changed files with plain-value arguments (pytest, and coachgate's unittest runner), replayed in a fresh process with no runner: in the run's order (differs_outside_tests) and each alone, twice in a row (depends_on_call_history). Each finding refuses an approval; a depends_on_call_history one the task asks for is acknowledged in record_verdict acknowledged_changes [{test: function, criterion, reason}].",
  );

/** The tests run a second time in the trusted runs' processes (src/observation/repetition.ts). */
const RepetitionSchema = z
  .object({
    tests_repeated: z.number(),
    over_budget: z
      .number()
      .describe(
        "Candidate tests not repeated: the repetitions had used their share of the run's time (10% of its CPU time, past 0.3 s).",
      ),
    unfinished: z
      .array(z.string())
      .describe('Tests whose repetition gave no answer (it ended the process or ran out of time).'),
    findings: z.array(
      z.object({
        test: z.string(),
        message: z.string().optional(),
        order: z
          .literal('reversed')
          .optional()
          .describe(
            "Set when the test failed in another order (fails_in_other_order): the repeated tests run once more from the session's start, reversed (pytest, unittest).",
          ),
        explained_by: z
          .string()
          .optional()
          .describe(
            'A function the test called that depends_on_call_history names: its finding covers this one.',
          ),
      }),
    ),
  })
  .describe(
    "Passing tests that called into the Player's changed Python files (trusted run) and the Player's passing tests (new-tests run), run a second time in the same pytest process state, and once more in another order: from the session's start, reversed. A finding (fails_when_repeated, or fails_in_other_order) is a test the change turned from failing to passing, or a cited one, that failed the second time; it refuses an approval unless acknowledged in record_verdict acknowledged_changes [{test, criterion, reason}].",
  );

/** One approval evaluation as record_verdict returns it and coach_turn_N.json keeps it (src/evaluation/evaluate.ts). */
export const EvaluationSchema = z.object({
  base_commit: z.string(),
  command: z.array(z.string()),
  planted: z
    .array(z.object({ file: z.string(), problem: z.string() }))
    .describe(
      "Files that would run the Player's code inside the trusted runs; when any is listed, no run started.",
    ),
  product_roots: z
    .array(z.string())
    .describe(
      "The base's product-code roots: the only paths the trusted runs take from the Player.",
    ),
  taken_from_player: z
    .array(z.string())
    .describe("The Player's changes to product code, which the trusted runs took."),
  left_out: z
    .array(z.object({ file: z.string(), change: z.enum(['added', 'modified', 'deleted']) }))
    .describe(
      'Changes the trusted runs did not take (the base version, or nothing, ran instead). Acknowledge one the product needs in record_verdict acknowledged_left_out.',
    ),
  taken_because: z
    .array(z.object({ file: z.string(), reason: z.string() }))
    .optional()
    .describe(
      "Why each file in taken_from_player is code: a manifest's root, or the test whose imports reach it.",
    ),
  unjudged_code: z
    .array(z.string())
    .optional()
    .describe(
      'Changed source files (not tests, test support or tooling) that no rule took and no acknowledgement covers.',
    ),
  vacuous: z
    .boolean()
    .optional()
    .describe(
      "True when the trusted runs took none of the Player's changed code although it changed source files: they judged nothing of the Player's, and an approval is refused.",
    ),
  null_turn: z
    .boolean()
    .optional()
    .describe(
      "True when the Player's tree differs from the base in no product file (only tests, docs or tooling, or nothing): the tests passed on the base's own code, and an approval needs acknowledged_null_turn.",
    ),
  unjudged_loaded: z
    .array(z.string())
    .optional()
    .describe(
      "Changed files the Player's run of the tests imported that the trusted runs left out (not tests or test support): the tests exercise them, the trusted runs judged the base's version, and an approval is refused until they are acknowledged or reverted.",
    ),
  startup_changed: z
    .array(z.string())
    .optional()
    .describe(
      "Start-up points outside the test side that the Player added or changed: files the runner's configuration loads before or around the tests (setup files, node's --require/--import in the test scripts, jest's transform and environment, pytest's -p plugins). The Player's run ran them, the trusted runs keep the base's; an approval is refused until they are acknowledged or reverted.",
    ),
  taken_by_acknowledgement: z
    .array(z.string())
    .describe('Left-out changes the Coach acknowledged, which the trusted runs took.'),
  baseline: z
    .object({ status: z.string(), cached: z.boolean(), tests_total: z.number() })
    .nullable()
    .describe('Base tests on the base code.'),
  trusted: z
    .object({
      status: z.string(),
      tests_total: z.number(),
      sandbox: z
        .string()
        .optional()
        .describe('The sandbox the trusted runs had: backend and network, or NOT SANDBOXED: why.'),
    })
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
  unshared_failures: z
    .array(
      z.object({
        test: z.string(),
        at_base: z.enum(['passed', 'failed', 'error', 'skipped', 'not run', 'case moved']),
        values: z
          .string()
          .optional()
          .describe(
            "A parametrized case's parameter values, when it was found at the base by them (pytest).",
          ),
        base_id: z
          .string()
          .optional()
          .describe("The base's id for the same case, when another (cases inserted before it)."),
      }),
    )
    .optional()
    .describe(
      "The Player's run's failures and errors that are not pre-existing, each with its outcome in the base's run of its tests ('not run': a test the base does not have, or one its run never reached; 'case moved': a positional parametrize id, such as case11, of a test whose number of cases the Player changed, so the base's case of that id is another one; said only where the runner reports no parameter values, else the case is found at the base by its values). Any of them refuses an approval. Absent when the base's tests did not run.",
    ),
  gone_from_player_run: z
    .array(z.string())
    .optional()
    .describe(
      "Base tests that passed at the base and do not run under their id in the Player's run (renamed, moved or removed). A gone base test not listed did not pass at the base (deselected, skipped, failing), so it is not lost.",
    ),
  passing_on_base_code: z
    .array(z.string())
    .describe("Tests that pass when the Player's tests run on the base code."),
  fail_to_pass_cached: z
    .boolean()
    .optional()
    .describe(
      "True when passing_on_base_code is a previous turn's result: the same base, command, environment and Player's test files (by content) ran then. Absent when no run of the Player's tests on the base code was needed.",
    ),
  kept_base_tests: z
    .array(z.string())
    .optional()
    .describe(
      'Of the tests the Coach cited for kept behaviour, the base tests that passed at the base and in the trusted run. Absent when none was cited.',
    ),
  uncollected_test_files: z.array(z.string()),
  test_files_written: z
    .array(z.string())
    .optional()
    .describe(
      "The base's test files, test data and test config that a run of the Player's code (trusted, new-tests) changed or removed: the product wrote into its own judge.",
    ),
  diverging_new_tests: z
    .array(
      z.object({
        test: z.string(),
        trusted_outcome: z.enum(['failed', 'error', 'skipped', 'missing']),
        responsible: z.array(z.string()),
      }),
    )
    .describe(
      "The Player's added tests that passed in the worktree but not with the base's test infrastructure.",
    ),
  observation: ObservationSchema.optional(),
  repetition: RepetitionSchema.optional(),
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
