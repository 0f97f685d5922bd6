import { z } from 'zod';
import { checkTestIntegrity } from '../actions/check-test-integrity.js';
import { BaseMovedSchema } from '../records/pinned-base.js';
import { defineTool } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';

const findingKind = z.enum([
  'skip_added',
  'focus_added',
  'test_deleted',
  'test_file_deleted',
  'assertions_removed',
  'test_config_changed',
  'task_file_modified',
  'module_stubbed',
  'tests_count_dropped',
  'test_data_changed',
  'hidden_from_git',
  'runner_detection',
]);

export const checkTestIntegrityTool = defineTool({
  name: 'check_test_integrity',
  title: 'Check test integrity',
  description:
    'Compares the worktree (committed + uncommitted + untracked) with the base commit and flags ways to make tests pass without making the code work: added skips or focus, deleted tests or test files, removed assertions, changed test selection/config, an edited task file, stubbed modules, fewer tests collected, product code that detects the test runner. must_fix findings block approval in record_verdict. Once an approval attempt has made the trusted runs for the current tree, each finding about base tests or config says whether they confirmed it (must_fix) or explained it away (info), as the approval guard weighs it.',
  input: z.object({
    worktree: worktreeInput,
    task_id: taskIdInput
      .optional()
      .describe('Also check the task file and compare test counts with the latest baseline run.'),
    base: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Base ref to compare with (default: --base, coachgate.base_ref, merge-base with main/master).',
      ),
  }),
  output: z.object({
    base_commit: z.string(),
    findings: z.array(
      z.object({
        kind: findingKind,
        severity: z
          .enum(['must_fix', 'should_fix', 'info'])
          .describe('info: an explanation the trusted run settled; it never blocks.'),
        file: z.string(),
        line: z.number().optional(),
        test: z
          .string()
          .optional()
          .describe('The test the finding is about, as the parser names it.'),
        detail: z.string(),
        trusted_run: z
          .object({ outcome: z.enum(['confirmed', 'explained']), detail: z.string() })
          .optional()
          .describe(
            'What the trusted run (base tests and config on this code) said: confirmed harm blocks, explained does not.',
          ),
      }),
    ),
    must_fix: z.number(),
    files_checked: z.array(z.string()),
    tests_at_base: z.number().optional(),
    tests_now: z.number().optional(),
    base_moved: BaseMovedSchema.optional(),
    trusted_evaluation: z
      .object({
        run_id: z.string(),
        regressions: z.array(z.string()),
        acknowledged: z.array(z.string()),
        left_out: z
          .array(z.string())
          .describe(
            "Changes the trusted runs took from the base, not the Player (not product code by the base's rules): `path (added|modified|deleted)`. Acknowledge one the product needs in record_verdict acknowledged_left_out.",
          ),
        diverging_new_tests: z
          .array(z.string())
          .describe(
            "The Player's added tests that passed in the worktree but not with the base's test infrastructure.",
          ),
      })
      .nullable()
      .optional()
      .describe(
        'The trusted runs of the latest approval attempt, when they describe the current tree; null when there are none (findings are then static only).',
      ),
  }),
  annotations: {
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  async run({ worktree, task_id, base }, context) {
    const report = await checkTestIntegrity(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      base ?? context.baseRef,
    );
    const lines = report.findings
      .slice(0, 10)
      .map(
        (finding) =>
          `- ${finding.severity} ${finding.kind} ${finding.file}${finding.line ? `:${finding.line}` : ''}: ${finding.detail}${finding.trusted_run ? ` [trusted run: ${finding.trusted_run.outcome} — ${finding.trusted_run.detail}]` : ''}`,
      );
    return {
      data: report,
      summary:
        report.findings.length === 0
          ? `No test-integrity findings against ${report.base_commit.slice(0, 12)} (${report.files_checked.length} changed test/config file(s) checked).`
          : `${report.trusted_evaluation ? `Judged with the trusted runs of ${report.trusted_evaluation.run_id}. ` : ''}${report.base_moved ? `BASE MOVED since the task was pinned (now ${report.base_moved.resolved.slice(0, 12)}). ` : ''}${report.findings.length} finding(s), ${report.must_fix} must_fix, against ${report.base_commit.slice(0, 12)}:\n${lines.join('\n')}`,
    };
  },
});
