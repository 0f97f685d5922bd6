import { z } from 'zod';
import { readTaskWorkResults } from '../actions/read-task-work-results.js';
import { defineTool, READ_ONLY } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { anyJsonValue } from '../records/portable-schema.js';

export const readTaskWorkResultsTool = defineTool({
  name: 'read_task_work_results',
  title: "Read the Player's report",
  description:
    "Reads the Player's self-report (.guardkit/autobuild/<TASK>/task_work_results.json or the latest player_turn_<N>.json, whichever was written last) in the AutoBuild or GuardKit shape, normalises and de-duplicates its paths, and checks that every claimed file exists. Claims are not evidence: use run_independent_tests and validate_requirements to verify them.",
  input: z.object({ worktree: worktreeInput, task_id: taskIdInput }),
  output: z.object({
    found: z.boolean(),
    path: z.string(),
    source: z.enum(['task_work_results', 'player_turn', 'none']),
    results: z.record(z.string(), anyJsonValue).nullable(),
    reported_gates: z.object({
      tests_all_passed: z.boolean().optional(),
      tests_passed: z.number().optional(),
      tests_failed: z.number().optional(),
      coverage_percent: z.number().optional(),
      coverage_met: z.boolean().optional(),
      arch_review_score: z.number().optional(),
      plan_audit_violations: z.number().optional(),
    }),
    claims: z.object({
      files_created: z.array(z.string()),
      files_modified: z.array(z.string()),
      tests_written: z.array(z.string()),
      requirements_met: z.array(z.string()),
      completion_promises: z.array(z.record(z.string(), anyJsonValue)),
    }),
    honesty: z.object({ verified: z.boolean(), missing_files: z.array(z.string()) }),
    problems: z.array(z.string()),
    message: z.string(),
  }),
  annotations: READ_ONLY,
  async run({ worktree, task_id }, context) {
    const report = await readTaskWorkResults(
      await context.workspace.resolveWorktree(worktree),
      task_id,
    );
    // A report that could not be read: its message already names the problems.
    const issues =
      report.results && report.problems.length ? ` Problems: ${report.problems.join('; ')}` : '';
    const missing = report.honesty.missing_files.length
      ? ` Missing: ${report.honesty.missing_files.join(', ')}.`
      : '';
    return { data: report, summary: `${report.message}${missing}${issues}` };
  },
});
