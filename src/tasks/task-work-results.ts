import { z } from 'zod';
import { normalisePathList } from '../repo/worktree-paths.js';
import { reportedFiles } from './player-report.js';

/**
 * The Player's self-report, `task_work_results.json`. Two shapes exist in the wild: the original AutoBuild
 * one (`test_results`, `coverage`, `code_review`, `plan_audit`, `requirements_met`) and GuardKit's current
 * one (`quality_gates`, `requirements_addressed`, `completion_promises`). Both are accepted; extra keys pass.
 */
const CompletionPromiseSchema = z.looseObject({
  criterion_id: z.string().optional(),
  criterion_text: z.string().optional(),
  status: z.string().optional().describe('"complete" counts as a claim; anything else does not.'),
  evidence: z.string().optional(),
  test_file: z.string().optional(),
  implementation_files: reportedFiles().optional(),
});

export const TaskWorkResultsSchema = z
  .looseObject({
    task_id: z.string().optional(),
    files_created: reportedFiles().optional(),
    files_modified: reportedFiles().optional(),
    tests_written: reportedFiles().optional(),
    tests_passed: z
      .boolean()
      .optional()
      .describe('Player turn reports: the Player says its tests pass.'),
    test_results: z
      .looseObject({
        all_passed: z.boolean().optional(),
        total: z.number().optional(),
        passed: z.number().optional(),
        failed: z.number().optional(),
      })
      .optional(),
    coverage: z
      .looseObject({
        line: z.number().optional(),
        branch: z.number().optional(),
        threshold_met: z.boolean().optional(),
      })
      .optional(),
    code_review: z.looseObject({ score: z.number().optional() }).optional(),
    plan_audit: z.looseObject({ violations: z.number().optional() }).optional(),
    requirements_met: z.array(z.string()).optional(),
    quality_gates: z
      .looseObject({
        all_passed: z.boolean().optional(),
        tests_passed: z.number().optional(),
        tests_failed: z.number().optional(),
        coverage: z.number().nullable().optional(),
        coverage_met: z.boolean().nullable().optional(),
        arch_review_score: z.number().optional(),
        plan_audit_violations: z.number().optional(),
      })
      .optional(),
    requirements_addressed: z.array(z.string()).optional(),
    completion_promises: z.array(CompletionPromiseSchema).optional(),
  })
  .describe('Player report task_work_results.json (AutoBuild or GuardKit shape).');

export type TaskWorkResults = z.infer<typeof TaskWorkResultsSchema>;
export type CompletionPromise = z.infer<typeof CompletionPromiseSchema>;

/** What the Player says about its quality gates, whichever shape it used; undefined = not reported. */
export interface ReportedGates {
  tests_all_passed?: boolean;
  tests_passed?: number;
  tests_failed?: number;
  coverage_percent?: number;
  coverage_met?: boolean;
  arch_review_score?: number;
  plan_audit_violations?: number;
}

export interface PlayerClaims {
  files_created: string[];
  files_modified: string[];
  tests_written: string[];
  requirements_met: string[];
  completion_promises: CompletionPromise[];
}

export function reportedGates(results: TaskWorkResults): ReportedGates {
  const gates = results.quality_gates;
  const tests = results.test_results;
  return dropUndefined({
    tests_all_passed: tests?.all_passed ?? gates?.all_passed ?? results.tests_passed,
    tests_passed: tests?.passed ?? gates?.tests_passed,
    tests_failed: tests?.failed ?? gates?.tests_failed,
    coverage_percent: results.coverage?.line ?? gates?.coverage ?? undefined,
    coverage_met: results.coverage?.threshold_met ?? gates?.coverage_met ?? undefined,
    arch_review_score: results.code_review?.score ?? gates?.arch_review_score,
    plan_audit_violations: results.plan_audit?.violations ?? gates?.plan_audit_violations,
  });
}

/** The Player's claims with every path made worktree-relative and de-duplicated. */
export function playerClaims(
  worktree: string,
  results: TaskWorkResults,
): { claims: PlayerClaims; problems: string[] } {
  const problems: string[] = [];
  const paths = (list: string[] | undefined) => {
    const normalised = normalisePathList(worktree, list ?? []);
    problems.push(...normalised.problems);
    return normalised.paths;
  };
  const promises = (results.completion_promises ?? []).map((promise) => ({
    ...promise,
    ...(promise.test_file !== undefined
      ? { test_file: paths([promise.test_file])[0] ?? promise.test_file }
      : {}),
    ...(promise.implementation_files
      ? { implementation_files: paths(promise.implementation_files) }
      : {}),
  }));
  const promised = promises
    .filter(isCompletePromise)
    .map((promise) => promise.criterion_id ?? promise.criterion_text)
    .filter((claim): claim is string => Boolean(claim));
  return {
    claims: {
      files_created: paths(results.files_created),
      files_modified: paths(results.files_modified),
      tests_written: paths(results.tests_written),
      requirements_met: [
        ...new Set([
          ...(results.requirements_met ?? []),
          ...(results.requirements_addressed ?? []),
          ...promised,
        ]),
      ],
      completion_promises: promises,
    },
    problems,
  };
}

/** A promise without a status is a completion claim; "partial"/"incomplete" are not. */
export function isCompletePromise(promise: CompletionPromise): boolean {
  return (promise.status ?? 'complete').toLowerCase() === 'complete';
}

/** Every file the Player says exists (created, modified, tests, promise evidence), once. */
export function claimedFiles(claims: PlayerClaims): string[] {
  const fromPromises = claims.completion_promises.flatMap((promise) => [
    ...(promise.test_file ? [promise.test_file] : []),
    ...(promise.implementation_files ?? []),
  ]);
  return [
    ...new Set([
      ...claims.files_created,
      ...claims.files_modified,
      ...claims.tests_written,
      ...fromPromises,
    ]),
  ];
}

function dropUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
