import path from 'node:path';
import { lstat, readFile, realpath, stat } from 'node:fs/promises';
import type { Config } from '../config/config.js';
import { isTestConfigFile, isTestFile, isTestSideFile } from '../scope/test-paths.js';
import { isTestDataFile } from '../scope/test-data.js';
import { filesDigest } from '../repo/fingerprint.js';
import { listAtCommit, listWorkingFiles } from '../repo/git.js';
import { withBytecodeCache } from '../runner/bytecode-cache.js';
import { withGoBuildCache } from '../runner/go-build-cache.js';
import { detectTestCommand, type TestCommand } from '../runner/detect.js';
import { projectEnvironment } from '../runner/environment.js';
import { pyenvChoice, type PyenvChoice } from '../runner/pyenv.js';
import { fileLimitArguments } from '../runner/file-limit.js';
import { firstPartyModules } from '../runner/first-party.js';
import type { TestCaseResult } from '../runner/report/types.js';
import type { Observation } from '../observation/judge.js';
import type { ObserveRequest } from '../observation/replay.js';
import type { Repetition } from '../observation/repetition.js';
import { runQueue } from '../runner/run-queue.js';
import { runTests } from '../runner/test-run.js';
import { effectivePolicy } from '../sandbox/policy.js';
import type { SandboxInForce } from '../sandbox/run.js';
import { newRunId, prepareRunLog } from '../records/runs.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import {
  readBaseline,
  readFailToPass,
  writeBaseline,
  writeFailToPass,
  type BaselineKey,
  type BaselineRun,
  type FailToPassKey,
  type FailToPassRun,
} from './run-cache.js';
import { passedAsIn } from '../runner/stable-test-id.js';
import { pythonDoctestSplices } from './doctest-splice.js';
import { plantedEnvironment, type PlantedFile } from './planted-environment.js';
import { trustedSelection, type TrustedSelection } from '../scope/product-code.js';
import {
  baseSnapshot,
  failToPassSnapshot,
  sourcesWithNewInlineTests,
  trustedSnapshot,
  type Snapshot,
} from './snapshot.js';
import { guardTestFiles } from './test-file-watch.js';
import { STEP, timed, type Steps } from './steps.js';

/** What the trusted runs are made from: the worktree as it is, the pinned base, the base's config. */
export interface TrustedRunsRequest {
  worktree: string;
  taskId: string;
  baseCommit: string;
  config: Config;
  /** Left-out paths the Coach acknowledged (files or directories): the trusted runs take them too. */
  acknowledgedPaths?: string[];
  /** The caller's one read of the environment (readEnvironmentOnce); read here when absent. */
  planted?: Promise<PlantedFile[]>;
}

export interface SnapshotRun {
  status: BaselineRun['status'];
  tests: TestCaseResult[];
  /** The sandbox the run had; absent when the baseline (maybe cached) stood in for it. */
  sandbox?: SandboxInForce;
  /** The base's test files, data and config the run changed or removed (runs of the Player's code). */
  wrote_test_files?: string[];
  /** The tests' calls into the Player's changed code, replayed outside the harness (trusted run). */
  observation?: Observation;
  /** The tests that may show the Player's change, run a second time in the run's process. */
  repetition?: Repetition;
}

/** The server-made runs of one tree, before they are compared with a candidate run. */
export interface TrustedRuns {
  planted: PlantedFile[];
  selection: TrustedSelection;
  /** Test files present in the worktree but not at the base. */
  added_tests: string[];
  /** Null when nothing ran (planted environment). */
  command: TestCommand | null;
  baseline?: BaselineRun & { cached: boolean };
  trusted?: SnapshotRun;
  /** Passing tests of the Player's tests on the base code. */
  passing_on_base_code: string[];
  /** Whether that result was a previous turn's (same base, command, environment and tests). */
  fail_to_pass_cached?: boolean;
  /** The Player's added tests with the base's test infrastructure; absent when not judged apart. */
  new_tests?: SnapshotRun;
}

/** The snapshots of one tree, made before anything runs: reading the worktree ends here. */
export interface PreparedRuns {
  request: TrustedRunsRequest;
  planted: PlantedFile[];
  selection: TrustedSelection;
  added_tests: string[];
  work?: {
    command: TestCommand;
    environment: unknown;
    /** The Python pyenv chooses for the snapshots, looked up once for all of them. */
    pyenv: PyenvChoice | null;
    base: Snapshot;
    /** Absent when its tree would equal the base's: the baseline stands for it. */
    trusted?: Snapshot;
    failToPass?: FailToPassWork;
    newTests?: { snapshot: Snapshot; files?: string[] };
  };
  remove(): Promise<void>;
}

interface FailToPassWork {
  /** `laid`: the Player's files in it, what its result depends on besides the base. */
  snapshot: Snapshot & { laid: string[] };
  /** Test files the run is limited to; absent: all of them. */
  files?: string[];
}

type SnapshotOutcome = SnapshotRun & { timed_out: boolean; cancelled: boolean };

/** A run limited to some files, with whether it was (a run naming none of them is not). */
type LimitedOutcome = SnapshotOutcome & { limited: boolean };

export interface RunHooks {
  signal?: AbortSignal;
  /** Each run's progress, by the run's name. */
  onProgress?: (run: string, elapsedMs: number, testsSeen: number) => void;
  /** Where each run's time is counted. */
  steps?: Steps;
}

/** The step each run is, by the run's name (its log's suffix). */
const RUN_STEPS = {
  baseline: STEP.baseline,
  trusted: STEP.trusted,
  'fail-to-pass': STEP.failToPass,
  'new-tests': STEP.newTests,
} as const;
type RunName = keyof typeof RUN_STEPS;

/** Runners whose test ids start with the test file, so an added file can be looked for in a run. */
const RUNNERS_WITH_FILE_IDS = new Set(['pytest', 'vitest', 'jest']);
/**
 * A JS file named as a test (`x.test.js`, `x.spec.ts`): helpers and fixtures under test/ are not, so
 * their absence from a run says nothing.
 */
const NAMED_AS_TEST = /[._-](?:test|spec)\.[^./]+$/;
const DEFAULT_TIMEOUT_S = 300;

export function isNamedAsTest(file: string): boolean {
  return file.endsWith('.py') || NAMED_AS_TEST.test(file);
}

/** Whether the command's test ids start with the test file (pytest, vitest, jest; not node's). */
export function idsNameFiles(command: TestCommand): boolean {
  return RUNNERS_WITH_FILE_IDS.has(command.scriptRunner ?? command.runner);
}

/**
 * Makes the snapshots the trusted runs need: base, trusted (base tests and config on the Player's code),
 * fail-to-pass (the Player's tests on the base code) and new-tests. A snapshot whose tree would equal the
 * base's is not made: the baseline is its run. Nothing is made when the borrowed environment was
 * tampered with.
 */
export async function prepareTrustedRuns(
  request: TrustedRunsRequest,
  steps?: Steps,
): Promise<PreparedRuns> {
  const { worktree, baseCommit, config } = request;
  const planted = await timed(
    steps,
    STEP.environment,
    () => request.planted ?? plantedEnvironment(worktree, request.taskId, baseCommit),
  );
  const [added, selection] = await timed(steps, STEP.git, async () => [
    await addedTestFiles(worktree, baseCommit),
    await trustedSelection(worktree, baseCommit, request.acknowledgedPaths),
  ]);
  const prepared: PreparedRuns = {
    request,
    planted,
    selection,
    added_tests: added,
    remove: async () => undefined,
  };
  if (planted.length > 0) return prepared;

  const base = await timed(steps, STEP.snapshots, () => baseSnapshot(worktree, baseCommit));
  const made: Snapshot[] = [base];
  prepared.remove = async () => void (await Promise.all(made.map((item) => item.remove())));
  try {
    // The base's command; a base with no test setup at all has no base tests to protect, so the
    // Player's command serves (fail-to-pass still needs one).
    const command = await detectTestCommand(base.dir, config).catch(() =>
      detectTestCommand(worktree, config),
    );
    // Runs of the Player's tests are limited to their files when the runner allows it: the rest of
    // the suite is the base's, and the baseline ran it.
    const takesFiles = fileLimitArguments(command) !== undefined;
    const present = (file: string) =>
      !selection.left_out.some((item) => item.file === file && item.change === 'deleted');
    const changed = [
      ...selection.code,
      ...selection.acknowledged,
      ...selection.left_out.map((item) => item.file),
    ];
    // What the fail-to-pass snapshot lays over the base; when every piece is a test file, the
    // other test files are the base's and the baseline already ran them on the base code.
    const playerTestSide = changed.filter(
      (file) => isTestSideFile(file) && !isTestConfigFile(file) && present(file),
    );
    // Tests the Player wrote inside product sources (Rust's `mod tests`) run on the base code too.
    const inlineTests = await sourcesWithNewInlineTests(worktree, base, selection.code);
    // And doctests the Player wrote in docstrings of product code, spliced into the base's.
    const doctests = await pythonDoctestSplices(
      worktree,
      base,
      selection.code,
      effectivePolicy(config.coachgate.sandbox),
    );
    const onlyTestFiles =
      inlineTests.length + doctests.size === 0 &&
      playerTestSide.every((file) => isTestFile(file) && isNamedAsTest(file));
    // Where ids do not name the file, the baseline's results of a base test file the Player changed
    // cannot be told from the run's: the run is limited only when every one of them is new.
    const limitFailToPass =
      takesFiles &&
      onlyTestFiles &&
      (idsNameFiles(command) || playerTestSide.every((file) => added.includes(file)));
    // The Player's added tests run apart from the base's: a test module can patch the product at
    // import time, and must not reach the run that judges the base tests.
    const newTestFiles = selection.new_tests.filter(isNamedAsTest);
    const make = async <T extends Snapshot>(snapshot: Promise<T>) => {
      const value = await snapshot;
      made.push(value);
      return value;
    };
    const [pyenv, trusted, failToPass, newTests] = await timed(steps, STEP.snapshots, () =>
      Promise.all([
        snapshotPyenv(base.dir, worktree),
        selection.code.length + selection.acknowledged.length > 0
          ? make(trustedSnapshot(worktree, base, selection))
          : undefined,
        playerTestSide.length + inlineTests.length + doctests.size > 0
          ? make(failToPassSnapshot(worktree, base, inlineTests, doctests))
          : undefined,
        // Every runner: where ids do not name files, the run's ids are compared with the baseline's.
        newTestFiles.length > 0
          ? make(trustedSnapshot(worktree, base, selection, true))
          : undefined,
      ]),
    );
    prepared.work = {
      command,
      environment: await environmentFingerprint(worktree, pyenv),
      pyenv,
      base,
      ...(trusted ? { trusted } : {}),
      ...(failToPass
        ? {
            failToPass: {
              snapshot: failToPass,
              ...(limitFailToPass ? { files: playerTestSide } : {}),
            },
          }
        : {}),
      ...(newTests
        ? { newTests: { snapshot: newTests, ...(takesFiles ? { files: newTestFiles } : {}) } }
        : {}),
    };
    return prepared;
  } catch (error) {
    await prepared.remove();
    throw error;
  }
}

/**
 * Runs the prepared snapshots side by side (the run queue bounds them by the machine's cores), with the
 * baseline from the cache when it was run before, then removes the snapshots.
 */
export async function executeTrustedRuns(
  prepared: PreparedRuns,
  hooks: RunHooks = {},
): Promise<TrustedRuns> {
  const { request, work } = prepared;
  const result: TrustedRuns = {
    planted: prepared.planted,
    selection: prepared.selection,
    added_tests: prepared.added_tests,
    command: null,
    passing_on_base_code: [],
  };
  if (!work) return result;
  try {
    const { command } = work;
    const key = { baseCommit: request.baseCommit, command, environment: work.environment };
    const cached = await readBaseline(request.worktree, key);
    // A test that passed at the base did not need the change: no run repeats it (when known now).
    const passedAtBase = (cached?.tests ?? [])
      .filter((test) => test.status === 'passed')
      .map((test) => test.id);
    const run = (snapshot: Snapshot, name: RunName, files?: string[], watched = false) =>
      runIn(snapshot, withFiles(command, files), name, prepared, hooks, watched, passedAtBase);
    const baselineRun: Promise<BaselineRun> = cached
      ? Promise.resolve(cached)
      : run(work.base, 'baseline').then(async (outcome) => {
          const value: BaselineRun = {
            base_commit: request.baseCommit,
            status: outcome.status,
            tests: outcome.tests,
          };
          if (!outcome.timed_out && !outcome.cancelled)
            await writeBaseline(request.worktree, key, value);
          return value;
        });
    const { failToPass: failToPassWork, newTests: newTestsWork } = work;
    const [baseline, trusted, failToPass, newTests] = await Promise.all([
      baselineRun,
      work.trusted ? run(work.trusted, 'trusted', undefined, true) : baselineRun,
      failToPassWork
        ? failToPassRun(
            failToPassWork,
            (files) => run(failToPassWork.snapshot, 'fail-to-pass', files),
            request,
            key,
          )
        : baselineRun,
      newTestsWork
        ? limitedRun(
            (files) => run(newTestsWork.snapshot, 'new-tests', files, true),
            command,
            newTestsWork.files,
          )
        : undefined,
    ]);
    if (hooks.signal?.aborted)
      throw new Error('the trusted runs were stopped', { cause: hooks.signal.reason });
    const onBaseCode = testsOnBaseCode(failToPass.tests, baseline.tests, {
      limitedTo: 'limited_to' in failToPass ? failToPass.limited_to : undefined,
      byFile: idsNameFiles(command),
    });
    return {
      ...result,
      command,
      baseline: { ...baseline, cached: cached !== undefined },
      trusted: {
        status: trusted.status,
        tests: trusted.tests,
        ...('sandbox' in trusted && trusted.sandbox ? { sandbox: trusted.sandbox } : {}),
        ...('wrote_test_files' in trusted ? { wrote_test_files: trusted.wrote_test_files } : {}),
        ...('observation' in trusted && trusted.observation
          ? { observation: trusted.observation }
          : {}),
        ...('repetition' in trusted && trusted.repetition
          ? { repetition: trusted.repetition }
          : {}),
      },
      // Rust doctests by item and occurrence: the base's file may put the Player's at other lines.
      passing_on_base_code: passedAsIn(onBaseCode, trusted.tests),
      ...('cached' in failToPass ? { fail_to_pass_cached: failToPass.cached } : {}),
      ...(newTests
        ? {
            new_tests: {
              status: newTests.status,
              tests: newTests.tests,
              wrote_test_files: newTests.wrote_test_files ?? [],
              ...(newTests.repetition ? { repetition: newTests.repetition } : {}),
            },
          }
        : {}),
    };
  } finally {
    await prepared.remove();
  }
}

/**
 * The Player's tests on the base code, limited to their files where the runner allows it; a previous
 * turn's result when its key (base, command, environment, the files laid) is unchanged. A run that
 * timed out or was stopped is not kept: its result says nothing about the next one.
 */
async function failToPassRun(
  work: FailToPassWork,
  run: (files?: string[]) => Promise<SnapshotOutcome>,
  { worktree, taskId }: TrustedRunsRequest,
  baseKey: BaselineKey & { command: TestCommand },
): Promise<FailToPassRun & { cached: boolean }> {
  // Read from the snapshot as the run will find it, after the snapshots are ready: the Player's run
  // does not wait for it.
  const tests = await filesDigest(work.snapshot.dir, work.snapshot.laid);
  const key: FailToPassKey | undefined = tests
    ? { ...baseKey, command: withFiles(baseKey.command, work.files), tests }
    : undefined;
  const stored = key && (await readFailToPass(worktree, taskId, key));
  if (stored) return { ...stored, cached: true };
  const outcome = await limitedRun(run, baseKey.command, work.files);
  const result: FailToPassRun = {
    status: outcome.status,
    tests: outcome.tests,
    ...(outcome.limited ? { limited_to: work.files } : {}),
  };
  if (key && !outcome.timed_out && !outcome.cancelled)
    await writeFailToPass(worktree, taskId, key, result);
  return { ...result, cached: false };
}

/**
 * A run limited to `files`, followed by a run of the whole suite when the limited one cannot be
 * told apart from it: no test id starts with one of the files (a runner rooted in a subfolder, a
 * run that reported nothing per test), or, where ids do not name files, it reported no test. A run
 * of the Player's files reports at least one (a file that fails to load is reported by its name).
 * The outcome says it timed out or was stopped when either run did.
 */
async function limitedRun(
  run: (files?: string[]) => Promise<SnapshotOutcome>,
  command: TestCommand,
  files: string[] | undefined,
): Promise<LimitedOutcome> {
  const first = await run(files);
  if (!files) return { ...first, limited: false };
  const { tests } = first;
  const limited = idsNameFiles(command)
    ? tests.some((test) => files.some((file) => test.id.startsWith(file)))
    : tests.length > 0;
  if (limited) return { ...first, limited };
  const whole = await run();
  return {
    ...whole,
    timed_out: first.timed_out || whole.timed_out,
    cancelled: first.cancelled || whole.cancelled,
    limited,
  };
}

/**
 * The Player's tests on the base code: a fail-to-pass run limited to the Player's test files, and
 * the baseline's results for the rest of the suite, which is the base's and ran on the base code
 * there. Where ids name files, the baseline's results of those files are left out (vitest may add
 * a file whose path ends like one of them); where they do not, the files were all new, so every
 * result of the baseline's is another file's, and both runs' results stand, as in a whole run.
 */
function testsOnBaseCode(
  failToPass: TestCaseResult[],
  baseline: TestCaseResult[],
  { limitedTo, byFile }: { limitedTo: string[] | undefined; byFile: boolean },
): TestCaseResult[] {
  if (!limitedTo) return failToPass;
  if (!byFile) return [...failToPass, ...baseline];
  const ran = new Set(failToPass.map((test) => test.id));
  return [
    ...failToPass,
    ...baseline.filter(
      (test) => !ran.has(test.id) && !limitedTo.some((file) => test.id.startsWith(file)),
    ),
  ];
}

/** The command limited to `files` (src/runner/file-limit.ts says how, per runner). */
function withFiles(command: TestCommand, files: string[] | undefined): TestCommand {
  return files ? { ...command, files } : command;
}

async function runIn(
  snapshot: Snapshot,
  command: TestCommand,
  name: RunName,
  prepared: PreparedRuns,
  hooks: RunHooks,
  /** A run of the Player's code beside the base's tests: what it writes into them is named. */
  watched: boolean,
  passedAtBase: string[],
): Promise<SnapshotOutcome> {
  const { request, selection } = prepared;
  // Each snapshot is its own directory, so the queue may run them side by side within its limit,
  // in the background beside the Player's run. Longest first: a run limited to the Player's test
  // files is short, so it takes what the full runs leave, and they end sooner
  // (src/runner/priority.ts).
  const priority = command.files ? 'lowest' : 'background';
  // Counted from the queue: time a run waits there for a core is time the turn waits.
  return timed(hooks.steps, RUN_STEPS[name], () =>
    runQueue.run(
      snapshot.dir,
      async () => {
        if (hooks.signal?.aborted)
          return { status: 'error', tests: [], timed_out: false, cancelled: true };
        const environment = await projectEnvironment(snapshot.dir, process.env, {
          pyenv: prepared.work?.pyenv ?? null,
        });
        // The borrowed virtualenv may hold an editable install whose .pth names the worktree's sources:
        // PYTHONPATH comes before site-packages, so the snapshot's own copy of the code is imported.
        environment.env.PYTHONPATH = [
          ...selection.python_import_roots.map((root) => path.join(snapshot.dir, root)),
          ...(environment.env.PYTHONPATH ? [environment.env.PYTHONPATH] : []),
        ].join(path.delimiter);
        // As a stored run's log: no link on the way, and a worktree deleted meanwhile is not re-created.
        const logPath = await prepareRunLog(
          request.worktree,
          request.taskId,
          `${newRunId()}-${name}`,
        );
        const timeoutS = request.config.toolchain?.test_timeout ?? DEFAULT_TIMEOUT_S;
        const guard = watched
          ? await guardTestFiles(snapshot.dir, baseTestFiles(selection))
          : undefined;
        const modules = await firstPartyModules(snapshot.dir);
        const observe = await observeRequest(
          snapshot.dir,
          selection,
          name,
          passedAtBase,
          prepared.work?.base.dir,
        );
        // The base's run (the baseline) fills the cache; the others read it once it is published.
        const bytecodeKey = {
          baseCommit: request.baseCommit,
          command,
          environment,
          cwd: snapshot.dir,
        };
        const use = snapshot === prepared.work?.base ? 'fill' : 'snapshot';
        const run = (goCache?: string) =>
          withBytecodeCache(request.worktree, bytecodeKey, use, (bytecode) =>
            runTests({
              command,
              environment: goCache
                ? { ...environment, env: { ...environment.env, GOCACHE: goCache } }
                : environment,
              cwd: snapshot.dir,
              loginShell: request.config.autobuild?.coach?.test_execution === 'login-shell',
              timeoutMs: timeoutS * 1000,
              logPath,
              makeLogDirectory: false,
              firstPartyModules: modules,
              sandbox: effectivePolicy(request.config.coachgate.sandbox),
              ...(guard ? { readOnly: guard.readOnly } : {}),
              ...(bytecode ? { bytecodeCache: bytecode } : {}),
              ...(observe ? { observe } : {}),
              signal: hooks.signal,
              priority,
              onProgress:
                hooks.onProgress && ((elapsed, seen) => hooks.onProgress!(name, elapsed, seen)),
            }),
          );
        const outcome = await withGoBuildCache(request.worktree, snapshot.dir, command, use, run);
        return guard ? { ...outcome, wrote_test_files: await guard.touched(logPath) } : outcome;
      },
      priority,
    ),
  );
}

/** The base's test files, test data and test config that a snapshot holds unchanged from the base. */
function baseTestFiles(selection: TrustedSelection): string[] {
  const taken = new Set([...selection.code, ...selection.acknowledged]);
  return [...selection.base_files].filter(
    (file) => !taken.has(file) && (isTestSideFile(file) || isTestDataFile(file)),
  );
}

const OBSERVED_SOURCE = /\.(?:py|[cm]?js)$/;

/**
 * What a run of the Player's Python or JavaScript code observes. The trusted run (base tests on the
 * Player's code) records the tests' calls into the changed product files and repeats the passing
 * tests that called into them (Python); the new-tests run repeats the Player's passing tests. Neither
 * repeats a test that passed at the base.
 */
async function observeRequest(
  directory: string,
  selection: TrustedSelection,
  name: RunName,
  passedAtBase: string[],
  baseDir: string | undefined,
): Promise<ObserveRequest | undefined> {
  if (name !== 'trusted' && name !== 'new-tests') return undefined;
  const root = await realpath(directory);
  const files = [...selection.code, ...selection.acknowledged]
    .filter((file) => OBSERVED_SOURCE.test(file) && !isTestSideFile(file))
    .map((file) => path.join(root, file));
  if (files.length === 0) return undefined;
  if (name === 'new-tests') {
    const tests = selection.new_tests.map((file) => path.join(root, file));
    return { files: [], callers: [], repeat: { files: tests, passedAtBase } };
  }
  const callers = baseTestFiles(selection).map((file) => path.join(root, file));
  const bases = baseDir === undefined ? {} : await baseTexts(baseDir, root, files);
  return { files, callers, repeat: { passedAtBase }, bases };
}

/** Larger base files are judged as if every line were the Player's: the check only widens. */
const BASE_TEXT_LIMIT = 1 << 20;

/**
 * Each changed Python or JavaScript file's text in the base's snapshot, so the equality watches
 * judge only the types whose lines the Player wrote. A link or an oversized file is left out (read as new).
 */
async function baseTexts(
  baseDir: string,
  root: string,
  files: readonly string[],
): Promise<Record<string, string>> {
  const texts: Record<string, string> = {};
  await Promise.all(
    files
      .filter((file) => OBSERVED_SOURCE.test(file))
      .map(async (file) => {
        const at = path.join(baseDir, path.relative(root, file));
        const found = await lstat(at).catch(() => undefined);
        if (found?.isFile() && found.size <= BASE_TEXT_LIMIT)
          texts[file] = await readFile(at, 'utf8');
      }),
  );
  return texts;
}

/**
 * pyenv's choice for the snapshots: they all hold the base's `.python-version`, if it has one; else
 * they choose as the worktree does (its ignored file, the folders above it), not as the temp directory.
 */
async function snapshotPyenv(snapshot: string, worktree: string): Promise<PyenvChoice | null> {
  return (await pyenvChoice(snapshot, process.env, { orFrom: worktree })) ?? null;
}

/** Test files present in the worktree but not at the base. */
async function addedTestFiles(worktree: string, baseCommit: string): Promise<string[]> {
  const base = new Set(await listAtCommit(worktree, baseCommit, ['.']));
  return (await listWorkingFiles(worktree)).filter(
    (file) => !file.startsWith(STORE_PREFIX) && isTestFile(file) && !base.has(file),
  );
}

/** What a cached baseline depends on besides the base and the command: the borrowed toolchain. */
async function environmentFingerprint(
  worktree: string,
  pyenv: PyenvChoice | null,
): Promise<unknown> {
  const resolve = (file: string) => realpath(path.join(worktree, file)).catch(() => null);
  const modified = (file: string) =>
    stat(path.join(worktree, file)).then(
      (info) => info.mtimeMs,
      () => null,
    );
  return {
    node: process.version,
    python: [await resolve('.venv/bin/python'), await resolve('venv/bin/python')],
    pyenv: pyenv?.bins ?? null,
    node_modules: await modified('node_modules/.package-lock.json'),
    path: process.env.PATH ?? '',
  };
}
