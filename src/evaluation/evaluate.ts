import path from 'node:path';
import { describeSandbox } from '../core/sandbox-policy.js';
import type { SandboxInForce } from '../sandbox/run.js';
import { realpath, stat } from 'node:fs/promises';
import type { z } from 'zod';
import type { Config } from '../core/config.js';
import type { EvaluationSchema } from '../core/evaluation-record.js';
import { isRunnerLoadedFile, isTestFile } from '../core/test-paths.js';
import { listAtCommit, listWorkingFiles } from '../repo/git.js';
import { detectTestCommand, type TestCommand } from '../runner/detect.js';
import { projectEnvironment } from '../runner/environment.js';
import { firstPartyModules } from '../runner/first-party.js';
import type { TestCaseResult } from '../runner/report/types.js';
import { runQueue } from '../runner/run-queue.js';
import { runTests } from '../runner/test-run.js';
import { effectivePolicy } from '../sandbox/policy.js';
import { newRunId, runsDirectory } from '../store/runs.js';
import { STORE_PREFIX } from '../store/paths.js';
import { readBaseline, writeBaseline, type BaselineRun } from './baseline-cache.js';
import { plantedEnvironment } from './planted-environment.js';
import { trustedSelection, type TrustedSelection } from './product-code.js';
import { baseSnapshot, failToPassSnapshot, trustedSnapshot, type Snapshot } from './snapshot.js';

/** One approval evaluation: what the guard reads about the three server-made runs. */
export type Evaluation = z.infer<typeof EvaluationSchema>;
/** A base test that passed at the base and does not pass against the Player's code. */
type Regression = Evaluation['regressions'][number];

export interface EvaluationRequest {
  worktree: string;
  taskId: string;
  baseCommit: string;
  config: Config;
  /** Tests of the latest stored candidate run (the worktree as it is): collection and divergence. */
  candidateTests: Pick<TestCaseResult, 'id' | 'status'>[];
  /** Left-out paths the Coach acknowledged (files or directories): the trusted runs take them too. */
  acknowledgedPaths?: string[];
  signal?: AbortSignal;
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
}

const DEFAULT_TIMEOUT_S = 300;
/** Runners whose test ids start with the test file, so an added file can be looked for in a run. */
const RUNNERS_WITH_FILE_IDS = new Set(['pytest', 'vitest', 'jest']);
/**
 * A JS file named as a test (`x.test.js`, `x.spec.ts`): helpers and fixtures under test/ are not, so
 * their absence from a run says nothing.
 */
const NAMED_AS_TEST = /[._-](?:test|spec)\.[^./]+$/;

/**
 * Runs the base's tests the trusted way: baseline (base tests on base code, cached), trusted (base tests
 * and config on the Player's code) and fail-to-pass (the Player's tests on the base code), each in its own
 * clean snapshot outside the worktree. Nothing is run when the borrowed environment was tampered with.
 */
export async function evaluateCandidate(request: EvaluationRequest): Promise<Evaluation> {
  const { worktree, baseCommit, config } = request;
  const planted = await plantedEnvironment(worktree);
  const addedTests = await addedTestFiles(worktree, baseCommit);
  const selection = await trustedSelection(worktree, baseCommit, request.acknowledgedPaths);
  const empty: Evaluation = {
    base_commit: baseCommit,
    command: [],
    planted,
    product_roots: selection.product_roots,
    taken_from_player: selection.code,
    left_out: selection.left_out,
    taken_by_acknowledgement: selection.acknowledged,
    baseline: null,
    trusted: null,
    regressions: [],
    preexisting_failures: [],
    passing_on_base_code: [],
    uncollected_test_files: [],
    diverging_new_tests: [],
  };
  if (planted.length > 0) return empty;

  const base = await baseSnapshot(worktree, baseCommit);
  let trusted: Snapshot | undefined;
  let failToPass: Snapshot | undefined;
  let newTests: Snapshot | undefined;
  try {
    // The base's command; a base with no test setup at all has no base tests to protect, so the
    // Player's command serves (fail-to-pass still needs one).
    const command = await detectTestCommand(base.dir, config).catch(() =>
      detectTestCommand(worktree, config),
    );
    const run = (snapshot: Snapshot, name: string) =>
      runIn(snapshot, command, name, request, selection.python_import_roots);
    const key = { baseCommit, command, environment: await environmentFingerprint(worktree) };
    // The Player's added tests run apart from the base's: a test module can patch the product at
    // import time, and must not reach the run that judges the base tests.
    const judgeNewTests =
      RUNNERS_WITH_FILE_IDS.has(command.scriptRunner ?? command.runner) &&
      selection.new_tests.some(isNamedAsTest);
    [trusted, failToPass, newTests] = await Promise.all([
      trustedSnapshot(worktree, baseCommit, selection),
      failToPassSnapshot(worktree, baseCommit),
      judgeNewTests ? trustedSnapshot(worktree, baseCommit, selection, true) : undefined,
    ]);
    const cached = await readBaseline(worktree, key);
    const [baseline, trustedRun, failToPassRun, newTestsRun] = await Promise.all([
      cached ??
        run(base, 'baseline').then(async (result) => {
          const value: BaselineRun = {
            base_commit: baseCommit,
            status: result.status,
            tests: result.tests,
          };
          if (!result.timed_out && !result.cancelled) await writeBaseline(worktree, key, value);
          return value;
        }),
      run(trusted, 'trusted'),
      run(failToPass, 'fail-to-pass'),
      newTests ? run(newTests, 'new-tests') : undefined,
    ]);
    const now = new Map(trustedRun.tests.map((test) => [test.id, test]));
    const regressions: Regression[] = [];
    const preexisting: string[] = [];
    for (const test of baseline.tests) {
      const after = now.get(test.id);
      if (test.status === 'passed' && after?.status !== 'passed') {
        regressions.push({
          test: test.id,
          outcome: after ? (after.status as Regression['outcome']) : 'missing',
          ...(after?.message ? { message: after.message } : {}),
        });
      } else if (
        (test.status === 'failed' || test.status === 'error') &&
        after &&
        after.status !== 'passed'
      ) {
        preexisting.push(test.id);
      }
    }
    return {
      ...empty,
      command: command.argv ?? [command.shellCommand ?? ''],
      baseline: {
        status: baseline.status,
        cached: cached !== undefined,
        tests_total: baseline.tests.length,
      },
      trusted: {
        status: trustedRun.status,
        tests_total: trustedRun.tests.length,
        ...(trustedRun.sandbox ? { sandbox: describeSandbox(trustedRun.sandbox) } : {}),
      },
      regressions,
      preexisting_failures: preexisting,
      passing_on_base_code: failToPassRun.tests
        .filter((test) => test.status === 'passed')
        .map((test) => test.id),
      uncollected_test_files: RUNNERS_WITH_FILE_IDS.has(command.scriptRunner ?? command.runner)
        ? addedTests.filter(
            (file) =>
              isNamedAsTest(file) &&
              !request.candidateTests.some((test) => test.id.startsWith(file)),
          )
        : [],
      diverging_new_tests: newTestsRun
        ? divergingNewTests(request.candidateTests, newTestsRun.tests, selection)
        : [],
    };
  } finally {
    await Promise.all([base.remove(), trusted?.remove(), failToPass?.remove(), newTests?.remove()]);
  }
}

function isNamedAsTest(file: string): boolean {
  return file.endsWith('.py') || NAMED_AS_TEST.test(file);
}

/**
 * The Player's added tests that passed in the worktree but not with the base's test infrastructure
 * around the Player's code: something the trusted runs left out (a conftest hook, a setup file, a
 * config) made them pass. The left-out files the runner loads are named as responsible.
 */
function divergingNewTests(
  candidate: EvaluationRequest['candidateTests'],
  judged: TestCaseResult[],
  selection: TrustedSelection,
): Evaluation['diverging_new_tests'] {
  const outcomes = new Map(judged.map((test) => [test.id, test.status]));
  const loaded = selection.left_out.map((item) => item.file).filter(isRunnerLoadedFile);
  const responsible = loaded.length > 0 ? loaded : selection.left_out.map((item) => item.file);
  return candidate
    .filter(
      (test) =>
        test.status === 'passed' &&
        selection.new_tests.some((file) => test.id.startsWith(file)) &&
        outcomes.get(test.id) !== 'passed',
    )
    .map((test) => ({
      test: test.id,
      trusted_outcome: outcomeOf(outcomes.get(test.id)),
      responsible,
    }));
}

function outcomeOf(status: string | undefined): Regression['outcome'] {
  if (status === undefined) return 'missing';
  return status === 'skipped' || status === 'error' ? status : 'failed';
}

async function runIn(
  snapshot: Snapshot,
  command: TestCommand,
  name: string,
  request: EvaluationRequest,
  pythonImportRoots: string[],
): Promise<{
  status: BaselineRun['status'];
  tests: TestCaseResult[];
  timed_out: boolean;
  cancelled: boolean;
  sandbox?: SandboxInForce;
}> {
  // Each snapshot is its own directory, so the queue may run them side by side within its limit.
  return runQueue.run(snapshot.dir, async () => {
    const environment = await projectEnvironment(snapshot.dir);
    // The borrowed virtualenv may hold an editable install whose .pth names the worktree's sources:
    // PYTHONPATH comes before site-packages, so the snapshot's own copy of the code is imported.
    environment.env.PYTHONPATH = [
      ...pythonImportRoots.map((root) => path.join(snapshot.dir, root)),
      ...(environment.env.PYTHONPATH ? [environment.env.PYTHONPATH] : []),
    ].join(path.delimiter);
    const logPath = path.join(
      runsDirectory(request.worktree, request.taskId),
      `${newRunId()}-${name}.log`,
    );
    const timeoutS = request.config.toolchain?.test_timeout ?? DEFAULT_TIMEOUT_S;
    return runTests({
      command,
      environment,
      cwd: snapshot.dir,
      loginShell: request.config.autobuild?.coach?.test_execution === 'login-shell',
      timeoutMs: timeoutS * 1000,
      logPath,
      firstPartyModules: await firstPartyModules(snapshot.dir),
      sandbox: effectivePolicy(request.config.coachgate.sandbox),
      signal: request.signal,
      onProgress: request.onProgress,
    });
  });
}

/** Test files present in the worktree but not at the base. */
async function addedTestFiles(worktree: string, baseCommit: string): Promise<string[]> {
  const base = new Set(await listAtCommit(worktree, baseCommit, ['.']));
  return (await listWorkingFiles(worktree)).filter(
    (file) => !file.startsWith(STORE_PREFIX) && isTestFile(file) && !base.has(file),
  );
}

/** What a cached baseline depends on besides the base and the command: the borrowed toolchain. */
async function environmentFingerprint(worktree: string): Promise<unknown> {
  const resolve = (file: string) => realpath(path.join(worktree, file)).catch(() => null);
  const modified = (file: string) =>
    stat(path.join(worktree, file)).then(
      (info) => info.mtimeMs,
      () => null,
    );
  return {
    node: process.version,
    python: [await resolve('.venv/bin/python'), await resolve('venv/bin/python')],
    node_modules: await modified('node_modules/.package-lock.json'),
    path: process.env.PATH ?? '',
  };
}
