import { z } from 'zod';
import { commandAsTyped } from '../runner/invocation.js';
import { describeSandbox } from '../config/sandbox-policy.js';
import { MAX_TIMEOUT_S, runIndependentTests } from '../actions/run-independent-tests.js';
import { RunRecordSchema } from '../records/run-record.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { Steps } from '../evaluation/steps.js';

export const runIndependentTestsTool = defineTool({
  name: 'run_independent_tests',
  title: 'Run the tests independently',
  description:
    "Runs the project's tests on the server, in the Player's environment (project virtualenv, node_modules/.bin), never trusting the Player's claim. Detects the command (base-commit toolchain.test, then pytest / package.json / go / cargo / maven / dotnet markers), reports per-test results, a summary with the first error, a failure class with advice, and a tree fingerprint. With task_id the run is stored and becomes the evidence record_verdict checks, except on a player-role server, whose runs are never stored. Sends progress notifications while it runs; runs as an MCP task (tasks/get, tasks/result, tasks/cancel) when the client asks for one.",
  input: z.object({
    worktree: worktreeInput,
    task_id: taskIdInput
      .optional()
      .describe('Store the run under .guardkit/autobuild/<TASK>/runs/ (needed for approval).'),
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(MAX_TIMEOUT_S)
      .optional()
      .describe(
        'Seconds before the run is killed (default: toolchain.test_timeout, else 300; at most 3600).',
      ),
    compare_baseline: z
      .boolean()
      .optional()
      .describe('Also run at the base commit and split failures into new and pre-existing.'),
    command: z
      .array(z.string())
      .min(1)
      .optional()
      .describe(
        'Explicit argv; refused unless the base-commit config sets coachgate.allow_command_override: true.',
      ),
  }),
  output: RunRecordSchema,
  // It runs project code, which can do anything to the worktree (tree_clean reports whether it did).
  longRunning: true,
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  async run({ worktree, ...request }, context) {
    const root = await context.workspace.resolveWorktree(worktree);
    // A counter keeps the progress value increasing across the snapshots and the run.
    let ticks = 0;
    const steps = new Steps();
    const run = await runIndependentTests(root, request, {
      baseRef: context.baseRef,
      storeAsEvidence: context.role !== 'player',
      signal: context.signal,
      steps,
      onProgress: (elapsedMs, testsSeen) =>
        void context.progress(
          ++ticks,
          `${steps.inProgress().join('; ') || 'candidate run'}: tests running for ${Math.round(elapsedMs / 1000)} s, ${testsSeen} finished so far`,
        ),
    });
    const { counts } = run;
    const headline = `${run.status.toUpperCase()}: ${counts.passed} passed, ${counts.failed} failed, ${counts.errors} errors, ${counts.skipped} skipped in ${(run.duration_ms / 1000).toFixed(1)} s (${commandAsTyped(run.command)}).`;
    const detail =
      run.status === 'passed'
        ? ''
        : `\nFailure class: ${run.failure_class}. ${run.advice}\n${run.summary}`;
    const baseline = run.baseline
      ? `\nBaseline ${run.baseline.base_commit.slice(0, 12)}: ${run.baseline.new_failures.length} new failure(s), ${run.baseline.preexisting_failures.length} pre-existing.`
      : '';
    return {
      data: run,
      summary: `${run.sandbox?.warning ? `${run.sandbox.warning}\n` : ''}${headline}${run.sandbox && !run.sandbox.warning ? ` Sandbox: ${describeSandbox(run.sandbox)}.` : ''}${run.tree_clean ? '' : '\nThe run changed files in the worktree.'}${baseline}${detail}`,
    };
  },
});
