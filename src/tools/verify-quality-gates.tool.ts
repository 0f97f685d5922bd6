import { z } from 'zod';
import { openTask } from '../actions/task-scope.js';
import { verifyQualityGates } from '../actions/verify-quality-gates.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { orNull } from '../records/portable-schema.js';

const gateName = z.enum(['tests', 'coverage', 'arch_review', 'plan_audit']);

export const verifyQualityGatesTool = defineTool({
  name: 'verify_quality_gates',
  title: 'Verify quality gates',
  description:
    "Evaluates every quality gate (tests, coverage, architectural review, plan audit) from the Player's report against thresholds in the base-commit .guardkit/config.yaml, and runs the configured toolchain.build / typecheck / lint commands itself (lint and typecheck pass when they add no error the pinned base did not have). No short-circuit; a required gate with no signal fails. The Player's test claim is checked independently by run_independent_tests.",
  input: z.object({ worktree: worktreeInput, task_id: taskIdInput }),
  output: z.object({
    tests_passed: z.boolean(),
    coverage_met: z.boolean(),
    arch_review_passed: z.boolean(),
    plan_audit_passed: z.boolean(),
    all_gates_passed: z.boolean(),
    failed_gates: z.array(z.string()),
    gates: z.array(
      z.object({ name: gateName, required: z.boolean(), passed: z.boolean(), reason: z.string() }),
    ),
    thresholds: z.object({
      arch_review_min: z.number(),
      coverage_min: orNull(z.number()),
      required_gates: z.array(gateName),
    }),
    toolchain_gates: z.array(
      z.object({
        name: z.enum(['build', 'typecheck', 'lint']),
        command: z.string(),
        passed: z.boolean(),
        reason: z.string(),
        exit_code: orNull(z.number()),
        duration_ms: z.number(),
        judged_by: z
          .string()
          .describe('Linter output format the findings were read from, or "exit code".'),
        new_errors: z
          .array(z.string())
          .describe('Errors absent at the base (first 20): file:line rule: message.'),
        preexisting_errors: z.number(),
        summary: z.string(),
        sandbox_warning: z
          .string()
          .optional()
          .describe('Present when the command ran unsandboxed (docs/sandbox.md).'),
      }),
    ),
    report_path: orNull(z.string()),
    problems: z.array(z.string()),
    warnings: z.array(z.string()),
  }),
  annotations: {
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  async run({ worktree, task_id }, context) {
    const scope = await openTask(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      context.baseRef,
    );
    const report = await verifyQualityGates(scope, undefined, context.signal);
    return {
      data: report,
      summary: report.all_gates_passed
        ? 'All quality gates passed.'
        : `Quality gates failed: ${report.failed_gates.join('; ')}.`,
    };
  },
});
