import { z } from 'zod';
import { checkTestIntegrity } from '../actions/check-test-integrity.js';
import { BaseMovedSchema } from '../state/pinned-base.js';
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
  'hidden_from_git',
]);

export const checkTestIntegrityTool = defineTool({
  name: 'check_test_integrity',
  title: 'Check test integrity',
  description:
    'Compares the worktree (committed + uncommitted + untracked) with the base commit and flags ways to make tests pass without making the code work: added skips or focus, deleted tests or test files, removed assertions, changed test selection/config, an edited task file, stubbed modules, fewer tests collected. must_fix findings block approval in record_verdict.',
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
        severity: z.enum(['must_fix', 'should_fix']),
        file: z.string(),
        line: z.number().optional(),
        detail: z.string(),
      }),
    ),
    must_fix: z.number(),
    files_checked: z.array(z.string()),
    tests_at_base: z.number().optional(),
    tests_now: z.number().optional(),
    base_moved: BaseMovedSchema.optional(),
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
          `- ${finding.severity} ${finding.kind} ${finding.file}${finding.line ? `:${finding.line}` : ''}: ${finding.detail}`,
      );
    return {
      data: report,
      summary:
        report.findings.length === 0
          ? `No test-integrity findings against ${report.base_commit.slice(0, 12)} (${report.files_checked.length} changed test/config file(s) checked).`
          : `${report.base_moved ? `BASE MOVED since the task was pinned (now ${report.base_moved.resolved.slice(0, 12)}). ` : ''}${report.findings.length} finding(s), ${report.must_fix} must_fix, against ${report.base_commit.slice(0, 12)}:\n${lines.join('\n')}`,
    };
  },
});
