import path from 'node:path';
import { isTestDataFile } from '../core/test-data.js';
import { collectIntegrityFacts } from '../analysis/test-facts.js';
import {
  explainWithTrustedRun,
  findIntegrityIssues,
  type ExplainedFinding,
  type FileVersions,
  type IntegrityFinding,
} from '../core/integrity.js';
import { plantedEnvironment } from '../evaluation/planted-environment.js';
import { readEvaluation } from '../evaluation/stored-evaluation.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { isTestConfigFile, needsTestFacts } from '../core/test-paths.js';
import { changedSince, listAtCommit, readAtCommit } from '../repo/git.js';
import { baseProductCode } from '../evaluation/product-code.js';
import { hiddenRunnerFiles } from '../repo/runner-loaded.js';
import { findTaskFile } from '../repo/tasks.js';
import { firstPartyModules } from '../runner/first-party.js';
import { STORE_PREFIX } from '../store/paths.js';
import { latestRun } from '../store/runs.js';
import { openRepository, openTask, type BaseMoved } from './task-scope.js';
import { readRegularFile } from '../repo/read-text.js';
import type { TrustedConfig } from '../repo/trusted-config.js';
import { effectivePolicy } from '../sandbox/policy.js';

export interface IntegrityReport {
  base_commit: string;
  findings: IntegrityFinding[];
  must_fix: number;
  files_checked: string[];
  tests_at_base?: number;
  tests_now?: number;
  base_moved?: BaseMoved | null;
}

/** What check_test_integrity reports: findings as the approval guard would weigh them right now. */
export interface IntegrityCheck extends Omit<IntegrityReport, 'findings'> {
  findings: ExplainedFinding[];
  /** The approval's trusted runs the findings were judged by, when they describe the current tree. */
  trusted_evaluation?: TrustedEvaluationSummary | null;
}

export interface TrustedEvaluationSummary {
  run_id: string;
  regressions: string[];
  acknowledged: string[];
  left_out: string[];
  diverging_new_tests: string[];
}

/**
 * Compares the working tree (committed, staged, unstaged and untracked) with the base commit and reports the
 * ways a Player makes tests pass without making the code work.
 */
export async function checkTestIntegrity(
  worktree: string,
  taskId: string | undefined,
  baseRef?: string,
): Promise<IntegrityCheck> {
  if (taskId === undefined)
    return integrityAgainstBase(await openRepository(worktree, baseRef), undefined);
  // A task is judged against its pinned base; a moved base is reported, not followed.
  const scope = await openTask(worktree, taskId, baseRef);
  const report = await integrityAgainstBase(scope, taskId);
  const stored = await currentEvaluation(worktree, taskId);
  if (!stored?.evaluation.trusted)
    return { ...report, base_moved: scope.base_moved, trusted_evaluation: null };
  // As the approval guard applies them: the trusted run confirms a finding or explains it away.
  const acknowledged = stored.acknowledged_changes.map((change) => change.test);
  const findings = explainWithTrustedRun(report.findings, {
    regressions: stored.evaluation.regressions,
    acknowledged,
  });
  return {
    ...report,
    findings,
    must_fix: findings.filter((finding) => finding.severity === 'must_fix').length,
    base_moved: scope.base_moved,
    trusted_evaluation: {
      run_id: stored.run_id,
      regressions: stored.evaluation.regressions.map((item) => `${item.test} (${item.outcome})`),
      acknowledged,
      left_out: stored.evaluation.left_out.map((item) => `${item.file} (${item.change})`),
      diverging_new_tests: stored.evaluation.diverging_new_tests.map(
        (item) =>
          `${item.test} (${item.trusted_outcome}; left out: ${item.responsible.join(', ')})`,
      ),
    },
  };
}

/** The trusted evaluation of the latest run, if an approval attempt made one for the tree as it is now. */
async function currentEvaluation(worktree: string, taskId: string) {
  const run = await latestRun(worktree, taskId);
  if (run.state !== 'ok') return undefined;
  const stored = await readEvaluation(worktree, taskId, run.value.run_id);
  return stored && stored.tree_hash === (await treeFingerprint(worktree)) ? stored : undefined;
}

/** The integrity check for a repository already opened at a known base commit, with its config. */
export async function integrityAgainstBase(
  repository: TrustedConfig & { worktree: string },
  taskId: string | undefined,
): Promise<IntegrityReport> {
  const { worktree } = repository;
  const base = repository.base.commit;
  const taskFile = taskId
    ? await findTaskFile(worktree, taskId, base).catch(() => undefined)
    : undefined;
  const changed = (await changedSince(worktree, base)).filter(
    (file) => !file.startsWith(STORE_PREFIX),
  );
  const relevant = changed.filter(
    (file) =>
      needsTestFacts(file) || isTestConfigFile(file) || isTestDataFile(file) || file === taskFile,
  );
  const product = await baseProductCode(worktree, base, await listAtCommit(worktree, base, ['.']));
  const versions = (files: string[]): Promise<FileVersions[]> =>
    Promise.all(
      files.map(async (file) => {
        const [before, now] = await Promise.all([
          readAtCommit(worktree, base, file),
          readRegularFile(path.join(worktree, file)).catch(() => undefined),
        ]);
        return {
          path: file,
          ...(before !== undefined ? { base: before } : {}),
          ...(now !== undefined ? { now } : {}),
        };
      }),
    );
  const files = await versions(relevant);
  const productCode = await versions(changed.filter(product.isProductCode));
  const counts = taskId ? await testCounts(worktree, taskId) : {};
  const findings = findIntegrityIssues({
    files,
    ...(await collectIntegrityFacts(files, {
      sandbox: effectivePolicy(repository.config.coachgate.sandbox),
    })),
    ...(taskFile ? { task_file: taskFile } : {}),
    first_party_modules: await firstPartyModules(worktree),
    ...counts,
    hidden_files: await hiddenFiles(worktree),
    product_code: productCode,
  });
  return {
    base_commit: base,
    findings,
    must_fix: findings.filter((finding) => finding.severity === 'must_fix').length,
    files_checked: relevant,
    ...counts,
  };
}

/**
 * Ignored files the runner loads: test-side code and config, and the site hooks of the project's own
 * virtualenv that would run the Player's code at every Python start-up (as the trusted runs refuse them).
 */
async function hiddenFiles(worktree: string): Promise<string[]> {
  const [runnerFiles, planted] = await Promise.all([
    hiddenRunnerFiles(worktree),
    plantedEnvironment(worktree),
  ]);
  const siteHooks = planted
    .map((item) => item.file)
    .filter((file) => file.includes('/site-packages/'));
  return [...runnerFiles, ...siteHooks];
}

/** Test totals now and at the base, when the latest stored run compared against a baseline. */
async function testCounts(
  worktree: string,
  taskId: string,
): Promise<{ tests_at_base?: number; tests_now?: number }> {
  const run = await latestRun(worktree, taskId);
  if (run.state !== 'ok' || !run.value.baseline) return {};
  return { tests_at_base: run.value.baseline.tests_total, tests_now: run.value.counts.total };
}
