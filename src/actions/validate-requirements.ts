import path from 'node:path';
import { codeOnly } from '../analysis/code-only.js';
import { ranFiles, type FailuresOnlyRun } from '../requirements/failures-only-run.js';
import { toWorktreeRelative } from '../repo/worktree-paths.js';
import {
  evaluateRequirements,
  filesToRead,
  type EvidenceInput,
  type RequirementsReport,
} from '../requirements/requirements.js';
import { hasPerTestResults, type RunRecord } from '../records/run-record.js';
import { listWorkingFiles } from '../repo/git.js';
import { loadTask, type LoadedTask } from '../repo/tasks.js';
import { resolveFileInWorktree } from '../repo/workspace.js';
import type { JsonFile } from '../records/files.js';
import { latestRun } from '../records/runs.js';
import { readTaskWorkResults, type TaskWorkResultsReport } from './read-task-work-results.js';
import type { TaskScope } from './task-scope.js';
import { readRegularFile } from '../repo/read-text.js';

export interface RequirementsValidation extends RequirementsReport {
  require_evidence: boolean;
  latest_run_id: string | null;
}

/**
 * Checks every acceptance criterion (base-commit version) against the Player's claims and the evidence given,
 * where evidence counts only if the server can confirm it in the worktree or in the latest stored run.
 */
export async function validateRequirements(
  scope: TaskScope,
  evidence: EvidenceInput[],
  known: {
    run?: JsonFile<RunRecord>;
    task?: LoadedTask;
    report?: TaskWorkResultsReport;
    passingOnBaseCode?: string[];
    keptBaseTests?: string[];
  } = {},
): Promise<RequirementsValidation> {
  const { worktree, taskId } = scope;
  const task = known.task ?? (await loadTask(worktree, taskId, scope.base.commit));
  const report = known.report ?? (await readTaskWorkResults(worktree, taskId));
  const latest = known.run ?? (await latestRun(worktree, taskId));
  const passed =
    latest.state === 'ok'
      ? latest.value.tests.filter((test) => test.status === 'passed').map((test) => test.id)
      : null;
  const files = new Map<string, string | null>();
  for (const file of filesToRead(evidence, report.claims.completion_promises))
    files.set(file, await readInside(worktree, file));
  const packageTests = await goPackageTests(worktree, [...files.keys()]);
  const requireEvidence = scope.config.coachgate.require_evidence;
  const failuresOnly =
    latest.state === 'ok' && latest.value.failures_only
      ? await failuresOnlyRun(worktree, latest.value.failures_only)
      : undefined;
  return {
    ...evaluateRequirements({
      criteria: task.acceptance_criteria,
      player_claims: report.claims.requirements_met,
      promises: report.claims.completion_promises,
      coach_evidence: evidence,
      require_evidence: requireEvidence,
      files,
      package_tests: packageTests,
      code_only: new Map(
        await Promise.all(
          [...files].map(
            async ([file, text]) =>
              [file, text === null ? null : await codeOnly(file, text)] as const,
          ),
        ),
      ),
      passed_tests: passed,
      failed_tests:
        latest.state === 'ok'
          ? latest.value.tests
              .filter((test) => test.status === 'failed' || test.status === 'error')
              .map((test) => test.id)
          : [],
      latest_run_lists_tests: latest.state !== 'ok' || hasPerTestResults(latest.value),
      passing_on_base_code: known.passingOnBaseCode ?? null,
      kept_base_tests: known.keptBaseTests ?? null,
      ...(failuresOnly ? { failures_only: failuresOnly } : {}),
    }),
    require_evidence: requireEvidence,
    latest_run_id: latest.state === 'ok' ? latest.value.run_id : null,
  };
}

/** A failures-only run's test files, read from the worktree as code (comments blanked). */
async function failuresOnlyRun(
  worktree: string,
  run: NonNullable<RunRecord['failures_only']>,
): Promise<FailuresOnlyRun> {
  const files = new Map<string, string>();
  for (const file of ranFiles(run.files, await listWorkingFiles(worktree))) {
    const text = await readInside(worktree, file);
    if (text !== null) files.set(file, await codeOnly(file, text));
  }
  return { files, failing: run.failing };
}

/**
 * The Go test files beside each cited one (a testify-style suite's runner may sit in another file of
 * its package than the cited method), by repository path.
 */
async function goPackageTests(worktree: string, cited: string[]): Promise<Map<string, string>> {
  const directories = new Set(
    cited
      .filter((file) => file.endsWith('_test.go'))
      .map((file) => toWorktreeRelative(worktree, file))
      .flatMap((relative) => (relative.ok ? [path.posix.dirname(relative.path)] : [])),
  );
  const found = new Map<string, string>();
  if (directories.size === 0) return found;
  for (const file of await listWorkingFiles(worktree)) {
    if (!file.endsWith('_test.go') || !directories.has(path.posix.dirname(file))) continue;
    const text = await readInside(worktree, file);
    if (text !== null) found.set(file, text);
  }
  return found;
}

/** The file's text, or null when it is missing or resolves outside the worktree. */
async function readInside(worktree: string, claimed: string): Promise<string | null> {
  const relative = toWorktreeRelative(worktree, claimed);
  if (!relative.ok) return null;
  const resolved = await resolveFileInWorktree(worktree, relative.path).catch(() => undefined);
  return resolved ? readRegularFile(resolved).catch(() => null) : null;
}
