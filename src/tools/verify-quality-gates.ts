import { z } from 'zod';
import { openTask } from '../actions/task-scope.js';
import { verifyQualityGates } from '../actions/verify-quality-gates.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { orNull } from '../core/portable-schema.js';

const gateName = z.enum(['tests', 'coverage', 'arch_review', 'plan_audit']);

export const verifyQualityGatesTool = defineTool({
  name: 'verify_quality_gates',
  title: 'Verify quality gates',
  description:
    "Evaluates every quality gate (tests, coverage, architectural review, plan audit) from the Player's report against thresholds in the base-commit .guardkit/config.yaml. No short-circuit; a required gate with no signal fails. The Player's test claim is checked independently by run_independent_tests.",
  input: z.object({ worktree: worktreeInput, task_id: taskIdInput }),
  output: z.object({
    tests_passed: z.boolean(),
    coverage_met: z.boolean(),
    arch_review_passed: z.boolean(),
    plan_audit_passed: z.boolean(),
    all_gates_passed: z.boolean(),
    failed_gates: z.array(z.string()),
    gates: z.array(z.object({ name: gateName, required: z.boolean(), passed: z.boolean(), reason: z.string() })),
    thresholds: z.object({ arch_review_min: z.number(), coverage_min: orNull(z.number()), required_gates: z.array(gateName) }),
    report_path: orNull(z.string()),
    problems: z.array(z.string()),
    warnings: z.array(z.string()),
  }),
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run({ worktree, task_id }, context) {
    const report = await verifyQualityGates(await openTask(await context.workspace.resolveWorktree(worktree), task_id, context.baseRef));
    return {
      data: report,
      summary: report.all_gates_passed ? 'All quality gates passed.' : `Quality gates failed: ${report.failed_gates.join('; ')}.`,
    };
  },
});
