import { z } from 'zod';
import { openTask } from '../actions/task-scope.js';
import { checkRequirements } from '../actions/requirements-check.js';
import type { RequirementsValidation } from '../actions/validate-requirements.js';
import { defineTool, READ_ONLY } from './tool.js';
import { CriterionReportSchema } from '../verdicts/coach-turn.js';
import { evidenceInput } from './evidence-input.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { orNull } from '../records/portable-schema.js';
import { whileTrustedRunsWait } from './trusted-wait.js';

export const validateRequirementsTool = defineTool({
  name: 'validate_requirements',
  title: 'Validate acceptance criteria against evidence',
  description:
    'Checks each acceptance criterion (from the base-commit task file) against the Player\'s claims and evidence: a criterion is verified only by a file:line whose snippet is within 3 lines, an existing file promised by the Player, or a test that PASSED in the latest stored run and does not pass on the base code (fail-to-pass, from the trusted runs the approval shares: it waits for them). "Met" means record_verdict would accept the same evidence; an item that does not hold is reported without hiding a valid one. "I implemented it" is not evidence (require_evidence, default true).',
  input: z.object({
    worktree: worktreeInput,
    task_id: taskIdInput,
    evidence: evidenceInput.optional(),
  }),
  output: z.object({
    criteria_total: z.number(),
    criteria_met: z.number(),
    all_criteria_met: z.boolean(),
    criteria: z.array(CriterionReportSchema),
    missing: z.array(z.string()),
    unmatched_claims: z.array(z.string()),
    require_evidence: z.boolean(),
    latest_run_id: orNull(z.string()),
  }),
  annotations: READ_ONLY,
  async run({ worktree, task_id, evidence }, context) {
    const scope = await openTask(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      context.baseRef,
    );
    const report = await whileTrustedRunsWait(context, (wait) =>
      checkRequirements(scope, evidence ?? [], wait),
    );
    return { data: report, summary: requirementsSummary(report) };
  },
});

/** The verdict on the criteria, then every evidence item that does not hold, even beside a valid one. */
function requirementsSummary(report: RequirementsValidation): string {
  const head = report.all_criteria_met
    ? report.criteria_total === 1
      ? 'The one criterion is met.'
      : `All ${report.criteria_total} criteria met.`
    : `${report.criteria_met}/${report.criteria_total} criteria met; not met: ${report.missing.join(', ') || '(task has no criteria)'}.`;
  const invalid = report.criteria.flatMap((criterion) =>
    criterion.evidence
      .filter((check) => !check.valid)
      .map((check) => `${criterion.id}: ${check.problem}`),
  );
  return invalid.length === 0
    ? head
    : `${head} Evidence that does not hold (${invalid.length}): ${invalid.join(' | ')}`;
}
