import { realpathSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readRegularFile } from '../repo/read-text.js';
import type { TestCommand } from './detect.js';
import type { RunEnvironment } from './environment.js';
import type { ProcessOutcome } from './execute.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { bytecodeCacheFor, runSandboxed, type SandboxInForce } from '../sandbox/run.js';
import type { BytecodeCache } from './bytecode-cache-types.js';
import { requestEqualityWatch } from './equality-watch.js';
import { buildInvocation } from './invocation.js';
import { declaredPackageManager, userScriptShell } from './package-manager.js';
import { OutputCapture } from './output-capture.js';
import type { RunPriority } from './run-queue.js';
import { classifyFailure } from './classify.js';
import { decideStatus } from './outcome.js';
import { EXIT_STATUS_SOURCE, exitStatusNodeScript, exitStatusTest } from './exit-status.js';
import { summarizeOutput, summaryWithFirstFailure } from './summary.js';
import { parseCargoTestOutput } from './report/cargo.js';
import { countsFromTests } from './report/counts.js';
import { goTestText, parseGoTestJson } from './report/go-test-json.js';
import { parseJestJson } from './report/jest-json.js';
import { parseJUnitXml } from './report/junit.js';
import { parseTapOutput } from './report/tap.js';
import { parseMochaSpecOutput } from './report/mocha-spec.js';
import { uvuFailuresOnly, type UvuFailuresOnly } from './report/uvu.js';
import { parsePytestReportLines, pytestLoadedFiles } from './report/pytest-jsonl.js';
import { writePytestReporter } from './pytest-reporter.js';
import { mayRunNodeTest, mayRunVitest, writeHarnessGuards } from './harness-guard.js';
import { readNodeLoadedFiles, writeNodeLoadedRecorder } from './node-loaded-files.js';
import { writeNodeCallRecorder } from './node-call-recorder.js';
import { nodeEqualityConfig } from './node-equality-watch.js';
import {
  nodeWatchCases,
  productEnds,
  readNodeWatch,
  writeNodeWatch,
  type NodeWatchEvents,
} from './node-watch.js';
import { readVitestEnds, writeVitestEndWatch } from './vitest-process-end.js';
import { VITEST_EQUALITY_SOURCE } from './vitest-equality-watch.js';
import { jestProcessEnds, processEndedTests } from './jest-process-end.js';
import { nodeObserveConfig } from '../observation/node-observe.js';
import { writeUnittestReporter } from './unittest-reporter.js';
import { scriptEndFile, writeUnittestShims } from './unittest-shims.js';
import type { ReportChannel } from './wrapper-reports.js';
import { countsFromSummaryLines } from './report/summary-lines.js';
import { stripAnsi } from './report/text.js';
import { staleBuild } from './stale-build.js';
import { runnerReportFiles } from './report-files.js';
import type { FailureClass, RunStatus, TestCaseResult, TestCounts } from './report/types.js';
import { completeJsonLines, type Observation } from '../observation/judge.js';
import { processEndedCase, type ProcessEnd } from './harness-case.js';
import { readRepetition, type Repetition } from '../observation/repetition.js';
import {
  replayRecordedCalls,
  requestObservation,
  type ObserveRequest,
} from '../observation/replay.js';

export interface TestRunSpec {
  command: TestCommand;
  environment: RunEnvironment;
  cwd: string;
  loginShell: boolean;
  timeoutMs: number;
  logPath: string;
  /** False: the log's directory must already exist, so a run never re-creates a deleted worktree. */
  makeLogDirectory?: boolean;
  firstPartyModules: string[];
  /** `toolchain.build` from the base config: how to rebuild a stale build output before the tests. */
  buildCommand?: string;
  /** The base config's sandbox policy (with the server's floor): every process of the run is confined by it. */
  sandbox: SandboxPolicy;
  /** Paths in `cwd` the run may read but not write (the base's tests in a trusted snapshot). */
  readOnly?: string[];
  /** Python's bytecode from the server's cache (src/runner/bytecode-cache.ts). */
  bytecodeCache?: BytecodeCache;
  signal?: AbortSignal;
  /** A trusted run beside the Player's: at a lower CPU priority (src/runner/run-queue.ts). */
  priority?: RunPriority;
  /** Called every PROGRESS_INTERVAL_MS while the run lasts. */
  onProgress?: (elapsedMs: number, testsSeen: number) => void;
  /**
   * Called once the run's processes have ended, before its reports are read: a caller that reads
   * the tree the run left can start then.
   */
  onProcessesEnded?: () => void;
  /**
   * Lists the files node test processes and vitest load (pytest's reporter always does): the
   * Player's run needs it, the trusted runs do not, and it costs something in every test process
   * (src/runner/node-loaded-files.ts).
   */
  listLoaded?: boolean;
  /**
   * A trusted run's calls into the Player's changed files, recorded and replayed outside the
   * harness (pytest, unittest, node --test, mocha, vitest, jest; src/observation/), and the tests that may show
   * the change run a second time (pytest, unittest); its passing equalities decided by types of those
   * files compared again as plain values (pytest and unittest; src/runner/equality-watch.ts).
   */
  observe?: ObserveRequest;
}

export interface TestRunResult extends ProcessOutcome {
  command: string[];
  shell: RunEnvironment['shell'];
  status: RunStatus;
  counts: TestCounts;
  tests: TestCaseResult[];
  summary: string;
  failure_class: FailureClass;
  advice: string;
  output_bytes: number;
  /** How the per-test results were obtained, or "none" when this run has no per-test results. */
  tests_source: string;
  /** What coachgate added to the command or environment to obtain them. */
  notes: string[];
  /**
   * Absolute paths of the files the tests' processes imported, where they are listed (pytest's
   * reporter; node --test and mocha through the node recorder; vitest through its module graph).
   */
  loaded_files?: string[];
  /** A run whose runner names failing tests only (uvu): the files it ran and the tests that failed. */
  failures_only?: UvuFailuresOnly;
  /** The sandbox the run had (absent only when nothing was started). */
  sandbox?: SandboxInForce;
  /** What the replay of the recorded calls outside the harness showed (spec.observe). */
  observation?: Observation;
  /** What running the tests a second time in the run's process showed (spec.observe.repeat). */
  repetition?: Repetition;
}

/** Hosts such as Claude Code reset their tool timeout on progress; 5 s is the most we may stay silent. */
const PROGRESS_INTERVAL_MS = 2_500;

/** Runs a test command once and interprets it: per-test results, counts, status, summary, failure class. */
export async function runTests(spec: TestRunSpec): Promise<TestRunResult> {
  const reportDirectory = await mkdtemp(path.join(os.tmpdir(), 'coachgate-report-'));
  try {
    if (spec.command.runner === 'unittest') await writeUnittestReporter(reportDirectory);
    if (['npm', 'custom'].includes(spec.command.runner))
      await writeUnittestShims(reportDirectory, spec.environment.env.PATH, Boolean(spec.observe));
    if (spec.command.runner === 'pytest') await writePytestReporter(reportDirectory);
    // pytest records calls and repeats tests; coachgate's own unittest runner repeats them.
    const observe = ['pytest', 'unittest'].includes(spec.command.runner) ? spec.observe : undefined;
    if (observe) await requestObservation(reportDirectory, observe);
    // A trusted run's passing equalities decided by the Player's types are judged again.
    if (spec.observe?.files.length && ['pytest', 'unittest'].includes(spec.command.runner))
      await requestEqualityWatch(reportDirectory, spec.observe.files, spec.observe.bases);
    const nodeTest = mayRunNodeTest(spec.command);
    const observeNode =
      (nodeTest || spec.command.runner === 'vitest') && spec.observe
        ? await nodeObserveConfig(spec.observe, spec.cwd)
        : undefined;
    const listLoaded = (nodeTest || spec.command.runner === 'vitest') && spec.listLoaded === true;
    // Process ends in every run; equality decided by the Player's types in a trusted run.
    const nodeWatchRequest = [
      exitStatusNodeScript(spec.command),
      nodeTest && spec.observe
        ? await nodeEqualityConfig(spec.observe.files, spec.observe.bases)
        : undefined,
    ] as const;
    const manager = await declaredPackageManager(
      spec.command,
      spec.environment,
      spec.cwd,
      reportDirectory,
      spec.signal,
    );
    const scriptShell =
      manager.command.runner === 'npm' && manager.command.chainStep
        ? await userScriptShell(spec.cwd, manager.environment.env)
        : undefined;
    const invocation = buildInvocation(
      manager.command,
      manager.environment,
      reportDirectory,
      spec.loginShell,
      scriptShell,
      listLoaded,
      observeNode !== undefined,
    );
    invocation.notes.push(...manager.notes);
    // What node loads first in the run (the harness guards, the loaded-file recorder, vitest's
    // loaded-file reporter): in the writable report directory, so read-only again: no test child
    // rewrites it for the next.
    const preloadFiles = [
      ...(nodeTest ? [await writeNodeWatch(reportDirectory, spec.cwd, ...nodeWatchRequest)] : []),
      ...(await writeHarnessGuards(
        spec.command,
        reportDirectory,
        invocation.added,
        observeNode ? VITEST_EQUALITY_SOURCE : '',
      )),
      ...(listLoaded ? await writeNodeLoadedRecorder(reportDirectory) : []),
      ...(observeNode ? [await writeNodeCallRecorder(reportDirectory, observeNode)] : []),
      ...(mayRunVitest(spec.command) ? [await writeVitestEndWatch(reportDirectory)] : []),
    ];
    if (invocation.scriptShell) {
      const { file, content } = invocation.scriptShell;
      await writeFile(file, content, { mode: 0o755 });
    }
    const capture = await OutputCapture.open(spec.logPath, spec.makeLogDirectory ?? true);
    const started = Date.now();
    const ticker =
      spec.onProgress &&
      setInterval(
        () => spec.onProgress!(Date.now() - started, capture.testsSeen),
        PROGRESS_INTERVAL_MS,
      );
    let outcome: ProcessOutcome & { sandbox?: SandboxInForce };
    let buildFailure: string | undefined;
    try {
      const build = await rebuildIfStale({ ...spec, ...manager }, capture);
      invocation.notes.push(...build.notes);
      buildFailure = build.failure;
      outcome =
        build.failure && build.outcome
          ? build.outcome
          : await runSandboxed(
              {
                argv: invocation.argv,
                cwd: spec.cwd,
                env: invocation.env,
                timeoutMs: spec.timeoutMs,
                signal: spec.signal,
                priority: spec.priority,
                // The runner writes its report here; the server reads it at the same path.
                isolation: {
                  policy: spec.sandbox,
                  writable: [reportDirectory],
                  readOnly: [...(spec.readOnly ?? []), ...preloadFiles],
                  loginShell: spec.loginShell,
                  ...(spec.bytecodeCache ? { bytecodeCache: spec.bytecodeCache } : {}),
                },
              },
              capture,
            );
    } finally {
      if (ticker) clearInterval(ticker);
      await capture.close();
    }
    const observation =
      (observe || observeNode) && !outcome.cancelled && !outcome.timed_out
        ? await replayRecordedCalls({
            reportDirectory,
            ...(observe
              ? { language: 'python', interpreter: invocation.argv[0]!, env: invocation.env }
              : { language: 'node', interpreter: 'node', env: spec.environment.env }),
            cwd: spec.cwd,
            sandbox: spec.sandbox,
            loginShell: spec.loginShell,
            readOnly: [...(spec.readOnly ?? []), ...preloadFiles],
            signal: spec.signal,
            priority: spec.priority,
          })
        : undefined;
    const repetition =
      observe && !outcome.cancelled && !outcome.timed_out
        ? await readRepetition(reportDirectory, spec.cwd, observation)
        : undefined;
    spec.onProcessesEnded?.();
    // Colour codes are stripped here, not prevented: the tests see the user's own colour settings.
    const excerpt = stripAnsi(capture.excerpt());
    const output = outcome.spawn_error ? `${outcome.spawn_error}\n${excerpt}` : excerpt;
    // go's JSON stream and cargo's per-test lines are read from the whole log: the excerpt keeps
    // the head, the tail and error lines, and a large suite's passing tests between them.
    const perTestOutput =
      spec.command.report === 'go-json' || spec.command.report === 'cargo'
        ? await wholeLog(spec.logPath, output)
        : output;
    const found: FoundReport | undefined =
      (await readReport(spec.command, invocation.channels, spec.cwd, perTestOutput)) ??
      (spec.command.report === 'text'
        ? ((await runnerReportFiles(spec.cwd, started, [reportDirectory]).catch(() => undefined)) ??
          (capture.tap.found ? await tapInLog(spec.logPath) : undefined) ??
          (await mochaSpecInLog(spec.logPath)))
        : undefined);
    // go's JSON stream is read for the ids; the summary and the classifier read the text go would print.
    const text =
      spec.command.report === 'go-json'
        ? goTestText(perTestOutput, await goModulePath(spec.cwd))
        : output;
    const loaded =
      found?.loaded ??
      (listLoaded ? await readNodeLoadedFiles(reportDirectory, realpathSync(spec.cwd)) : undefined);
    const failuresOnly = found ? undefined : uvuFailuresOnly(text);
    if (failuresOnly) invocation.notes.push(FAILURES_ONLY_NOTE);
    const cache = outcome.sandbox && bytecodeCacheFor(outcome.sandbox.backend, spec.bytecodeCache);
    if (cache) invocation.notes.push(bytecodeNote(cache.writable, spec.environment.interpreter));
    const summaryCounts = found ? null : countsFromSummaryLines(text);
    const watched: NodeWatchEvents = nodeTest
      ? await readNodeWatch(reportDirectory)
      : { ends: [], equalities: [], matchers: [] };
    const exitTest =
      found || summaryCounts || failuresOnly || buildFailure
        ? undefined
        : exitStatusTest(spec.command, outcome, text, [
            ...(await scriptEnds(reportDirectory)),
            ...productEnds(watched),
          ]);
    // A product end is named even where the runner it killed left nothing per test to read: the
    // node watch's, a vitest fork's, a jest process's (jest's whatever its report says).
    const watchCases = nodeWatchCases(watched);
    const ended = [
      ...(await vitestEndCases(reportDirectory)),
      ...processEndedTests(await jestProcessEnds(reportDirectory)),
    ];
    const report = found
      ? [...found.tests, ...watchCases, ...ended]
      : exitTest
        ? [exitTest, ...ended]
        : ended.length > 0 || (!summaryCounts && watchCases.length > 0)
          ? [...watchCases, ...ended]
          : undefined;
    const tests = report ?? [];
    const counts = report
      ? countsFromTests(report)
      : (summaryCounts ?? { total: 0, passed: 0, failed: 0, errors: 0, skipped: 0 });
    const status =
      outcome.cancelled || buildFailure
        ? 'error'
        : decideStatus({
            exit_code: outcome.exit_code,
            signal: outcome.signal,
            timed_out: outcome.timed_out,
            counts,
            output: text,
          });
    const failure = buildFailure
      ? { failure_class: 'build' as const, advice: buildFailure }
      : classifyFailure({
          status,
          output: text,
          exit_code: outcome.exit_code,
          signal: outcome.signal,
          firstPartyModules: spec.firstPartyModules,
          counts,
          script: spec.command.script ?? spec.command.shellCommand,
        });
    return {
      ...outcome,
      command: invocation.argv,
      shell: invocation.shell,
      status,
      counts,
      tests,
      summary: outcome.cancelled
        ? `Run cancelled by the client after ${outcome.duration_ms} ms.\n${summarizeOutput(text, 1400)}`
        : summaryWithFirstFailure(text, tests),
      failure_class: failure.failure_class,
      advice: outcome.cancelled
        ? 'The run was cancelled before it finished; run the tests again.'
        : failure.advice,
      output_bytes: capture.bytes,
      tests_source: found?.source ?? (exitTest ? EXIT_STATUS_SOURCE : 'none'),
      ...(loaded ? { loaded_files: loaded } : {}),
      notes: invocation.notes,
      ...(failuresOnly ? { failures_only: failuresOnly } : {}),
      ...(observation ? { observation } : {}),
      ...(repetition ? { repetition } : {}),
    };
  } finally {
    await rm(reportDirectory, { recursive: true, force: true });
  }
}

/**
 * Never a pass on a stale build: when the tests would import a git-ignored build older than the sources,
 * rebuild it first (`toolchain.build`, else the package's `build` script), or refuse to run the tests.
 */
async function rebuildIfStale(
  spec: TestRunSpec,
  capture: OutputCapture,
): Promise<{
  notes: string[];
  failure?: string;
  outcome?: ProcessOutcome & { sandbox?: SandboxInForce };
}> {
  const stale = await staleBuild(spec.cwd);
  if (!stale) return { notes: [] };
  // The words before `test`: `pnpm`, or `corepack pnpm` when corepack provides it.
  const manager = spec.command.runner === 'npm' ? spec.command.argv!.slice(0, -1).join(' ') : 'npm';
  const command = spec.buildCommand ?? (stale.hasBuildScript ? `${manager} run build` : undefined);
  const why = `${stale.directory}/ (the package's entry point, git-ignored) is older than ${stale.newerSource}`;
  if (!command) {
    return {
      notes: [`stale build: ${why}; no build command`],
      failure: `Stale build: ${why}, and there is no toolchain.build or "build" script to rebuild it. Build it, or add a build script, then re-run.`,
      outcome: {
        exit_code: null,
        signal: null,
        timed_out: false,
        cancelled: false,
        duration_ms: 0,
      },
    };
  }
  capture.write(`[coachgate] ${why}: running \`${command}\` before the tests\n`);
  const outcome = await runSandboxed(
    {
      argv: ['sh', '-c', command],
      cwd: spec.cwd,
      env: spec.environment.env,
      timeoutMs: spec.timeoutMs,
      signal: spec.signal,
      priority: spec.priority,
      isolation: { policy: spec.sandbox, loginShell: spec.loginShell },
    },
    capture,
  );
  const notes = [`stale build: ${why}; ran \`${command}\` first (exit ${outcome.exit_code})`];
  if (outcome.exit_code === 0) return { notes };
  return {
    notes,
    outcome,
    failure: `Stale build: ${why}, and \`${command}\` failed (exit ${outcome.exit_code}); fix the build (see the summary), then re-run.`,
  };
}

interface FoundReport {
  tests: TestCaseResult[];
  source: string;
  /** The files the tests' process imported, where the reporter lists them. */
  loaded?: string[];
}

/** Per-test results and how they were obtained, or undefined when the run left nothing per-test to read. */
async function readReport(
  command: TestCommand,
  channels: ReportChannel[],
  cwd: string,
  output: string,
): Promise<FoundReport | undefined> {
  if (command.report === 'go-json')
    return { tests: parseGoTestJson(output), source: 'go test -json output' };
  if (command.report === 'cargo')
    return { tests: parseCargoTestOutput(output), source: "cargo test's per-test lines" };
  for (const channel of channels) {
    const text = await readFile(channel.file, 'utf8').catch(() => undefined);
    if (!text) continue;
    try {
      const tests = parseChannel(channel, text, cwd);
      const loaded =
        channel.format === 'pytest-jsonl' ? pytestLoadedFiles(text, realpathSync(cwd)) : undefined;
      return { tests, source: channel.source, ...(loaded ? { loaded } : {}) };
    } catch {
      // A runner killed mid-write can leave a truncated report: fall back to the summary lines.
    }
  }
  return undefined;
}

function parseChannel(channel: ReportChannel, text: string, cwd: string): TestCaseResult[] {
  if (channel.format === 'jest-json') return parseJestJson(text, cwd);
  // Python names the plugins' files by their real paths.
  if (channel.format === 'pytest-jsonl') return parsePytestReportLines(text, realpathSync(cwd));
  return parseJUnitXml(text);
}

/**
 * A log larger than this is not searched for TAP or mocha's spec tree: the run keeps its counts
 * from the summary lines.
 */
const MAX_LOG_BYTES = 64 * 1024 * 1024;

/** The run's whole log (up to MAX_LOG_BYTES, colour codes stripped); the excerpt if it is unreadable. */
async function wholeLog(logPath: string, excerpt: string): Promise<string> {
  const log = await readLog(logPath);
  return log === undefined ? excerpt : stripAnsi(log);
}

function readLog(logPath: string): Promise<string | undefined> {
  return readRegularFile(logPath, MAX_LOG_BYTES).catch(() => undefined);
}

/**
 * Per-test results from TAP the command printed (tape, node-tap, ava --tap, mocha's and node's tap
 * reporters). The whole log is read, not the excerpt: a long TAP stream must not lose its middle.
 */
async function tapInLog(
  logPath: string,
): Promise<{ tests: TestCaseResult[]; source: string } | undefined> {
  const log = await readLog(logPath);
  const tests = log === undefined ? undefined : parseTapOutput(log);
  return tests && { tests, source: "TAP in the run's output (read with tap-parser)" };
}

/**
 * Per-test results from mocha's spec reporter, kept because the user's script chose it (mocha takes
 * one reporter: asking for another would change what the user sees). The whole log, as for TAP.
 */
async function mochaSpecInLog(
  logPath: string,
): Promise<{ tests: TestCaseResult[]; source: string } | undefined> {
  const log = await readLog(logPath);
  const tests = log === undefined ? undefined : parseMochaSpecOutput(log);
  return tests && { tests, source: "mocha's spec output in the run's log (its tree of suites)" };
}

const FAILURES_ONLY_NOTE =
  'uvu names failing tests only: passing tests are not listed; a test cited by name is checked ' +
  'as not failing and written in a test file this run ran (failures_only)';

/** The module path go.mod declares, which prefixes every package id in `go test -json`. */
async function goModulePath(cwd: string): Promise<string | undefined> {
  const text = await readRegularFile(path.join(cwd, 'go.mod')).catch(() => '');
  return /^module\s+(\S+)/m.exec(text)?.[1];
}

const BYTECODE_FILLED =
  "Python's bytecode was written to the server's cache for this base (the baseline runs no " +
  'Player code); later runs read it read-only';
const BYTECODE_READ =
  "Python's bytecode came from the server's read-only cache, made from the base's run " +
  '(PYTHONPYCACHEPREFIX)';

/**
 * A vitest fork a project frame ended (src/runner/vitest-process-end.ts): an error case each, named
 * by where, since vitest's report lists the test it cut short as passed.
 */
async function vitestEndCases(reportDirectory: string): Promise<TestCaseResult[]> {
  return (await readVitestEnds(reportDirectory)).map((end) => {
    const { id, message } = processEndedCase(end);
    return { id, status: 'error', message };
  });
}

/** What a run did with the base's bytecode cache; a virtualenv's is compiled by coachgate. */
function bytecodeNote(writable: boolean, virtualenv: string | undefined): string {
  if (!writable) return BYTECODE_READ;
  return virtualenv
    ? "Python's bytecode was written to a scratch cache (the project's virtualenv can be the " +
        "Player's): coachgate compiled the modules it names into the server's cache, checked by " +
        'content, which later runs read read-only'
    : BYTECODE_FILLED;
}

/** The early ends a watched plain script wrote (src/runner/script-end-watch.ts); none when not. */
async function scriptEnds(reportDirectory: string): Promise<ProcessEnd[]> {
  const text = await readFile(scriptEndFile(reportDirectory), 'utf8').catch(() => '');
  return completeJsonLines<Omit<ProcessEnd, 'nodeid'>>(text).map((end) => ({
    ...end,
    nodeid: null,
  }));
}
