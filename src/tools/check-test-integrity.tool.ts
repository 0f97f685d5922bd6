import { z } from 'zod';
import { checkTestIntegrity } from '../actions/check-test-integrity.js';
import { BaseMovedSchema } from '../records/pinned-base.js';
import { defineTool, READ_ONLY } from './tool.js';
import { taskIdInput, worktreeInput } from './shared-inputs.js';
import { counted } from '../errors/quote.js';
import { Steps } from '../evaluation/steps.js';

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
  'harness_reach',
  'doctest_changed',
  'special_cases_test_input',
  'base_test_fails',
]);

export const checkTestIntegrityTool = defineTool({
  name: 'check_test_integrity',
  title: 'Check test integrity',
  description:
    "Compares the worktree (committed + uncommitted + untracked) with the base commit and flags ways to make tests pass without making the code work: added skips or focus, deleted tests or test files, removed assertions, changed test selection/config, an edited task file, stubbed modules, fewer tests collected, product code that detects the test runner, added product lines that compare or tabulate the tests' own literal inputs. must_fix findings block approval in record_verdict. With task_id, the findings are judged by the trusted runs as the approval guard will judge them (an approval attempt's for this tree, or made now from the latest run_independent_tests run): a base test that was renamed, moved, wrapped, split or parametrized and still passes under its new name is info; one that no longer runs in any form, or fails against this code, stays must_fix; a base test failing against this code is reported even where no static finding names it.",
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
    dynamic: z
      .boolean()
      .default(true)
      .describe(
        "With task_id: judge the findings by the trusted runs (base tests and config on this code, as record_verdict will), starting them from the task's latest run of this tree when no approval attempt made them; it costs what an approval's evaluation costs (the baseline is cached). false: static findings only.",
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
        replaced_by: z
          .array(
            z.object({
              test: z.string().describe('The base test, as the parser names it.'),
              file: z.string(),
              as: z.string().describe('The test that looks like it now.'),
              how: z.enum(['moved', 'renamed', 'wrapped', 'split', 'parametrized']),
            }),
          )
          .optional()
          .describe(
            'For a gone base test or a deleted test file: the added tests that took their place (same name in a new file/class/describe, same body under a new name, a name extended in the same file (a test split in two), or a new parametrized test).',
          ),
        not_replaced: z
          .array(z.string())
          .optional()
          .describe('Gone base tests nothing in the current tree looks like.'),
        trusted_run: z
          .object({
            outcome: z.enum(['confirmed', 'not_replaced', 'explained']),
            detail: z.string(),
          })
          .optional()
          .describe(
            "What the runs said: confirmed (a base test it concerns fails against this code) and not_replaced (the base test passes but the Player's suite no longer runs it in any form) block; explained does not.",
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
        'The trusted runs the findings were judged by, when they describe the current tree; null when there are none (findings are then static only, dynamic_verdict says why).',
      ),
    took: z
      .object({ total_ms: z.number(), static_ms: z.number(), trusted_runs_ms: z.number() })
      .optional()
      .describe(
        "Where the call's time went: reading the changes (static) and the trusted runs (made now, or read from an approval attempt), which run side by side.",
      ),
    dynamic_verdict: z
      .object({
        state: z.enum(['from_approval', 'evaluated', 'not_run']),
        detail: z.string(),
      })
      .describe(
        'from_approval: the trusted runs of an approval attempt on this tree; evaluated: made by this call; not_run: static findings only, detail says why (no task_id, no run of this tree yet, dynamic: false, or the runs could not be made).',
      ),
  }),
  longRunning: true,
  annotations: READ_ONLY,
  async run({ worktree, task_id, base, dynamic }, context) {
    let ticks = 0;
    const steps = new Steps();
    const report = await checkTestIntegrity(
      await context.workspace.resolveWorktree(worktree),
      task_id,
      base ?? context.baseRef,
      {
        dynamic,
        signal: context.signal,
        steps,
        onProgress: (elapsedMs, testsSeen) =>
          void context.progress(
            ++ticks,
            `${steps.inProgress().join('; ') || 'trusted evaluation'}: waiting ${Math.round(elapsedMs / 1000)} s, ${counted(testsSeen, 'test')} finished in the trusted runs`,
          ),
      },
    );
    const lines = report.findings
      .slice(0, 10)
      .map(
        (finding) =>
          `- ${finding.severity} ${finding.kind} ${finding.file}${finding.line ? `:${finding.line}` : ''}: ${finding.detail}${finding.trusted_run ? ` [trusted run: ${finding.trusted_run.outcome} — ${finding.trusted_run.detail}]` : ''}`,
      );
    const took = report.took
      ? `${report.findings.length === 0 ? ' ' : '\n'}Took ${seconds(report.took.total_ms)}: ${seconds(report.took.static_ms)} reading the changes, ${seconds(report.took.trusted_runs_ms)} ${report.dynamic_verdict.state === 'evaluated' ? 'running the trusted runs' : 'finding the trusted runs'}, side by side.`
      : '';
    return {
      data: report,
      summary:
        (report.findings.length === 0
          ? `No test-integrity findings against ${report.base_commit.slice(0, 12)} (${report.files_checked.length} changed test/config file(s) checked).`
          : `${report.trusted_evaluation ? `Judged with the trusted runs of ${report.trusted_evaluation.run_id}. ` : `${capitalised(report.dynamic_verdict.detail)}. `}${report.base_moved ? `BASE MOVED since the task was pinned (now ${report.base_moved.resolved.slice(0, 12)}). ` : ''}${report.findings.length} finding(s), ${report.must_fix} must_fix, against ${report.base_commit.slice(0, 12)}:\n${lines.join('\n')}`) +
        took,
    };
  },
});

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
