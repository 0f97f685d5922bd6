import { readdir, readFile, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { OutputCapture } from '../runner/output-capture.js';
import type { RunPriority } from '../runner/run-queue.js';
import { runSandboxed } from '../sandbox/run.js';
import { judgeReplay, parseRecordedCalls, type Observation, type ReplayAnswer } from './judge.js';
import { NODE_CALLS } from '../runner/node-call-recorder.js';
import { NODE_REPLAY_FILE, NODE_REPLAY_SOURCE } from './node-replay-script.js';
import { REPLAY_FILE, REPLAY_SOURCE } from './replay-script.js';

/** What a trusted run observes: the Player's changed product files and the tests' files. */
export interface ObserveRequest {
  /** Absolute real paths of the changed product files whose functions are observed. */
  files: string[];
  /** Absolute real paths of the test-side files whose calls into them are recorded. */
  callers: string[];
  /**
   * Passing tests to run a second time in the run's process (src/runner/repeat-in-harness.ts):
   * those of `files` (absolute real paths) when given, else those that called into the changed
   * files; never the tests that passed at the base (`passedAtBase`, by id).
   */
  repeat?: { files?: string[]; passedAtBase: string[] };
  /**
   * Each changed Python or JS file's text at the base, by its path in `files`; absent: new there.
   * The equality watches read it, and the recorder's oracle watch runs it (src/runner/oracle-watch.ts).
   */
  bases?: Record<string, string>;
}

/** Where the recorder finds its request and writes its calls (src/runner/call-recorder.ts). */
const OBSERVE_CONFIG = 'coachgate_observe.json';
export const CALLS_FILE = 'observed-calls.jsonl';
/** Where the repeater writes its answers, one JSON line per repeated test (./repetition.ts). */
export const REPEATED_FILE = 'repeated-tests.jsonl';
const ANSWER_FILE = 'replay-answer.json';
const REPLAY_TIMEOUT_MS = 120_000;

/** Variables a runner sets or reads: none reaches the replay, which runs with no runner. */
const RUNNER_VARIABLE = /^(?:_?PYTEST|COACHGATE|COV_CORE|NODE_TEST|JEST_|VITEST|MOCHA_?)/i;
/** Calls read from a node run's test processes: beyond it, the record counts as cut. */
const NODE_CALL_LINES = 10_000;

/** Asks the run's recorder to observe: a file in the run's own report directory, nothing else. */
export async function requestObservation(
  reportDirectory: string,
  request: ObserveRequest,
): Promise<void> {
  const { files, callers, repeat, bases } = request;
  const calls = path.join(reportDirectory, CALLS_FILE);
  const repeated = repeat && {
    repeated: path.join(reportDirectory, REPEATED_FILE),
    repeat_files: repeat.files,
    passed_at_base: repeat.passedAtBase,
  };
  await writeFile(
    path.join(reportDirectory, OBSERVE_CONFIG),
    JSON.stringify({ files, callers, calls, ...repeated, ...(bases ? { bases } : {}) }),
  );
}

export interface ReplaySpec {
  reportDirectory: string;
  /** The interpreter the run used (python), or `node`: the recorder's language. */
  interpreter: string;
  language: 'python' | 'node';
  cwd: string;
  /** The run's environment; runner variables are removed from it. */
  env: Record<string, string>;
  sandbox: SandboxPolicy;
  loginShell: boolean;
  readOnly: string[];
  signal?: AbortSignal;
  priority?: RunPriority;
}

/**
 * Replays the calls the run recorded, outside the harness, in the same sandbox door as the run,
 * and judges the answers; undefined when the run recorded nothing (not observed, or it never
 * reached the end of its session).
 */
export async function replayRecordedCalls(spec: ReplaySpec): Promise<Observation | undefined> {
  const node = spec.language === 'node';
  const callsPath = path.join(spec.reportDirectory, CALLS_FILE);
  const text = node
    ? await gatherNodeCalls(spec.reportDirectory, callsPath)
    : await readFile(callsPath, 'utf8').catch(() => undefined);
  const root = await realpath(spec.cwd);
  // Files are named as the repository names them.
  const lines = (text === undefined ? [] : parseRecordedCalls(text)).map((line) =>
    line.event === 'call' ? { ...line, file: path.relative(root, line.file) } : line,
  );
  if (!lines.some((line) => line.event === 'call')) return undefined;
  const script = path.join(spec.reportDirectory, node ? NODE_REPLAY_FILE : REPLAY_FILE);
  const answerPath = path.join(spec.reportDirectory, ANSWER_FILE);
  await writeFile(script, node ? NODE_REPLAY_SOURCE : REPLAY_SOURCE);
  const argv = node
    ? [spec.interpreter, script, 'run', callsPath, answerPath]
    : [spec.interpreter, script, callsPath, answerPath];
  // The product's own output during the replay is kept apart from the run's log.
  const capture = await OutputCapture.open(path.join(spec.reportDirectory, 'replay.log'));
  try {
    await runSandboxed(
      {
        argv,
        cwd: spec.cwd,
        env: Object.fromEntries(
          Object.entries(spec.env).filter(([name]) => !RUNNER_VARIABLE.test(name)),
        ),
        timeoutMs: REPLAY_TIMEOUT_MS,
        signal: spec.signal,
        priority: spec.priority,
        isolation: {
          policy: spec.sandbox,
          writable: [spec.reportDirectory],
          readOnly: [...spec.readOnly, script],
          loginShell: spec.loginShell,
        },
      },
      capture,
    );
  } finally {
    await capture.close();
  }
  const answer = await readFile(answerPath, 'utf8').then(
    (json) => JSON.parse(json) as ReplayAnswer,
    () => undefined,
  );
  return judgeReplay(lines, answer ?? { import_failed: [], alone: {}, session: {} });
}

/**
 * A node run's calls, one list per test process, joined in one file for the replay (cut at
 * NODE_CALL_LINES lines); undefined when no process recorded any.
 */
async function gatherNodeCalls(
  reportDirectory: string,
  callsPath: string,
): Promise<string | undefined> {
  const lists = (await readdir(reportDirectory)).filter((name) => NODE_CALLS.test(name)).sort();
  if (lists.length === 0) return undefined;
  const texts = await Promise.all(
    lists.map((name) => readFile(path.join(reportDirectory, name), 'utf8')),
  );
  // A process killed mid-line leaves a partial last line: each list keeps its whole lines.
  const lines = texts.flatMap((each) => each.split('\n').slice(0, -1));
  const kept = lines.slice(0, NODE_CALL_LINES);
  if (lines.length > kept.length) kept.push(JSON.stringify({ event: 'cut', test: '(run)' }));
  const text = kept.map((line) => `${line}\n`).join('');
  await writeFile(callsPath, text);
  return text;
}
