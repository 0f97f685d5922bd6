import { realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { failingTests, type RunRecord } from '../records/run-record.js';
import { treeFingerprint } from '../repo/fingerprint.js';
import { changedSince, listWorkingFiles } from '../repo/git.js';
import { runBaseline } from '../runner/baseline.js';
import { withBytecodeCache } from '../runner/bytecode-cache.js';
import { detectTestCommand } from '../runner/detect.js';
import { projectEnvironment } from '../runner/environment.js';
import { firstPartyModules } from '../runner/first-party.js';
import { runQueue } from '../runner/run-queue.js';
import { runTests, type TestRunResult } from '../runner/test-run.js';
import { effectivePolicy } from '../sandbox/policy.js';
import { startTreeRuns } from '../evaluation/early-runs.js';
import { newRunId, prepareRunLog, saveRun } from '../records/runs.js';
import { openRepository, openTask } from './task-scope.js';
import { STEP, timed, type Steps } from '../evaluation/steps.js';

export interface RunTestsRequest {
  task_id?: string;
  timeout_s?: number;
  compare_baseline?: boolean;
  command?: string[];
}

export interface RunTestsOptions {
  baseRef?: string;
  /** false: a run for the caller's information only (the player role); it is never stored as evidence. */
  storeAsEvidence?: boolean;
  signal?: AbortSignal;
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
  /** Where the call's steps are counted; the caller reads the steps in progress from it. */
  steps?: Steps;
}

const DEFAULT_TIMEOUT_S = 300;
/** As the test run reports: hosts may allow 5 s of silence. */
const PROGRESS_INTERVAL_MS = 2_500;
export const MAX_TIMEOUT_S = 3600;

/**
 * "Trust but verify": the server runs the tests itself, in the Player's environment, and stores the run with
 * the fingerprint of the tree it tested — the only test evidence the approval guard accepts.
 */
export async function runIndependentTests(
  worktree: string,
  request: RunTestsRequest,
  options: RunTestsOptions = {},
): Promise<RunRecord> {
  // A task's runs compare against its pinned base; touching a task pins it. Opened while the run
  // waits for its turn in the queue, and beside the tree's reads once it has it.
  const opening = openRun(worktree, request, options.baseRef);
  let refused = false;
  opening.catch(() => (refused = true));
  const queued = runQueue.run(worktree, async () => {
    // Refused while it waited behind another run: the tree (every file of it) is not read for it.
    if (refused) await opening;
    // Independent reads of the tree, so they overlap each other and the opening (git reads of the
    // base); the fingerprint (git ls-files, every file read) dominates. They are made in the queue:
    // another run in this worktree could be changing the tree.
    const reads = Promise.all([
      projectEnvironment(worktree),
      firstPartyModules(worktree),
      treeFingerprint(worktree),
    ]);
    reads.catch(() => undefined); // the opening's error is the one to report
    const { repo, command } = await opening;
    const [environment, modules, treeBefore] = await reads;
    const timeoutS = Math.min(
      request.timeout_s ?? repo.config.toolchain?.test_timeout ?? DEFAULT_TIMEOUT_S,
      MAX_TIMEOUT_S,
    );
    const loginShell = repo.config.autobuild?.coach?.test_execution === 'login-shell';
    const store = request.task_id !== undefined && options.storeAsEvidence !== false;
    const runId = newRunId();
    const startedAt = new Date().toISOString();
    // Before the trusted runs are started: a log path refused (a link on the way) leaves none waiting.
    const logPath = store
      ? await prepareRunLog(worktree, request.task_id!, runId)
      : path.join(os.tmpdir(), 'coachgate-runs', `${runId}.log`);
    // An approval of this tree needs the trusted runs: they start beside this run, so record_verdict
    // finds them done or running. Their snapshots are made before the Player's code runs, so a run that
    // rewrites files and restores them cannot change what they test.
    const early = store
      ? startTreeRuns({
          worktree,
          taskId: request.task_id!,
          baseCommit: repo.base.commit,
          config: repo.config,
          tree: treeBefore,
        })
      : undefined;
    if (early)
      await timed(options.steps, STEP.snapshots, () =>
        reportingProgress(early.ready, options.onProgress),
      );
    const spec = {
      command,
      environment,
      loginShell,
      timeoutMs: timeoutS * 1000,
      firstPartyModules: modules,
      buildCommand: repo.config.toolchain?.build,
      sandbox: effectivePolicy(repo.config.coachgate.sandbox),
      signal: options.signal,
      onProgress: options.onProgress,
    };

    let run: TestRunResult;
    let treeAfter: string;
    let changedLoaded: string[] | undefined;
    // The tree as the run left it, read from the moment its processes end, beside the reading of
    // its reports; the fingerprint and the changed files loaded share one listing of it.
    let after: { working: Promise<string[]>; fingerprint: Promise<string> } | undefined;
    const readTreeAfter = () => {
      if (!after) {
        const working = listWorkingFiles(worktree);
        after = { working, fingerprint: treeFingerprint(worktree, working) };
        // Awaited below, unless the run's reports cannot be read: then its error is the one.
        after.fingerprint.catch(() => undefined);
      }
      return after;
    };
    try {
      // The environment's bytecode, read-only, once a baseline of this base published it.
      const bytecodeKey = { baseCommit: repo.base.commit, command, environment, cwd: worktree };
      run = await timed(options.steps, STEP.candidate, () =>
        withBytecodeCache(worktree, bytecodeKey, 'worktree', (bytecodeCache) =>
          runTests({
            ...spec,
            cwd: worktree,
            logPath,
            listLoaded: true,
            onProcessesEnded: readTreeAfter,
            ...(bytecodeCache ? { bytecodeCache } : {}),
          }),
        ),
      );
      const { working, fingerprint } = readTreeAfter();
      [treeAfter, changedLoaded] = await Promise.all([
        fingerprint,
        run.loaded_files &&
          changedFilesLoaded(worktree, repo.base.commit, run.loaded_files, working),
      ]);
    } catch (error) {
      // A run that could not be made or read (a worktree deleted under it) leaves no trusted run waiting.
      early?.stop();
      throw error;
    }
    // Only a passing run of an unchanged tree keeps them: a red run is sent back far more often than
    // approved (with failures the base shares, the approval starts them itself), and the runs would
    // cost the next turn's CPU.
    if (treeBefore !== treeAfter || run.cancelled || run.status !== 'passed') early?.stop();
    const notes = [
      ...(run.sandbox?.warning ? [run.sandbox.warning] : []),
      ...environment.notes,
      ...run.notes,
      `per-test results: ${run.tests_source}`,
      ...repo.warnings,
    ];
    if (!store && request.task_id)
      notes.push('not stored: runs requested through the player role are never evidence');
    if (treeBefore !== treeAfter)
      notes.push('the test run changed files in the worktree (tree_clean: false)');

    let baseline: RunRecord['baseline'];
    if (request.compare_baseline && !run.cancelled) {
      const base = await timed(options.steps, STEP.baseline, () =>
        runBaseline(worktree, repo.base.commit, { ...spec, onProgress: undefined }),
      );
      const failing = failingTests(run);
      const before = new Set(base.failing);
      baseline = {
        base_commit: base.base_commit,
        status: base.status,
        cached: base.cached,
        tests_total: base.tests_total,
        new_failures: failing.filter((id) => !before.has(id)),
        preexisting_failures: failing.filter((id) => before.has(id)),
      };
    }

    const record: RunRecord = {
      run_id: runId,
      task_id: request.task_id ?? null,
      started_at: startedAt,
      command: run.command,
      detected_by: command.detected_by,
      cwd: worktree,
      status: run.status,
      exit_code: run.exit_code,
      signal: run.signal,
      timed_out: run.timed_out,
      cancelled: run.cancelled,
      duration_ms: run.duration_ms,
      counts: run.counts,
      tests: run.tests,
      tests_source: run.tests_source,
      ...(changedLoaded ? { changed_files_loaded: changedLoaded } : {}),
      ...(run.failures_only ? { failures_only: run.failures_only } : {}),
      summary: run.summary,
      failure_class: run.failure_class,
      advice: run.advice,
      env: {
        shell: run.shell,
        ...(environment.interpreter ? { interpreter: environment.interpreter } : {}),
        path_prefix: environment.path_prefix,
        notes,
      },
      tree_hash: treeBefore,
      tree_clean: treeBefore === treeAfter,
      ...(baseline ? { baseline } : {}),
      ...(run.sandbox ? { sandbox: run.sandbox } : {}),
      log_path: logPath,
      output_bytes: run.output_bytes,
    };
    return store ? saveRun(worktree, request.task_id!, record) : record;
  });
  // A refused request (no repository, an unknown task) is answered at once, not after a run ahead.
  return Promise.all([opening, queued]).then(([, record]) => record);
}

/** The repository (the task's, pinned, when there is one) and the test command to run in it. */
async function openRun(worktree: string, request: RunTestsRequest, baseRef?: string) {
  const repo =
    request.task_id !== undefined
      ? await openTask(worktree, request.task_id, baseRef)
      : await openRepository(worktree, baseRef);
  return { repo, command: await detectTestCommand(worktree, repo.config, request.command) };
}

/** Progress while the trusted snapshots are made, so the call shows it is alive from its start. */
async function reportingProgress(
  work: Promise<void>,
  onProgress: RunTestsOptions['onProgress'],
): Promise<void> {
  if (!onProgress) return work;
  const started = Date.now();
  const timer = setInterval(() => onProgress(Date.now() - started, 0), PROGRESS_INTERVAL_MS);
  try {
    await work;
  } finally {
    clearInterval(timer);
  }
}

/**
 * The files changed since the base that the tests' process imported, worktree-relative: what an
 * evaluation must have judged (src/evaluation/evaluate.ts). Only these are kept, not the whole list,
 * so the record stays the size of the change.
 */
async function changedFilesLoaded(
  worktree: string,
  baseCommit: string,
  loaded: string[],
  working: Promise<string[]>,
): Promise<string[]> {
  const root = await realpath(worktree);
  const inside = new Set(loaded.map((file) => path.relative(root, file).split(path.sep).join('/')));
  return changedSince(worktree, baseCommit, { among: [...inside], working });
}
