import { spawn, type ChildProcess } from 'node:child_process';
import { RunTree } from './process-tree.js';
import type { OutputCapture } from './output-capture.js';

export interface ProcessSpec {
  /** argv[0] is the program; never passed through a shell. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /**
   * The program is a sandbox whose command runs in a PID namespace of its own: when the program
   * has exited by itself, the kernel is killing what is left of the run (bubblewrap reports the
   * status a moment before its init exits), so the machine's processes are not searched for it
   * (a sweep reads every process: about 4 ms on a run's path).
   */
  pidNamespace?: true;
}

export interface ProcessOutcome {
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  cancelled: boolean;
  duration_ms: number;
  /** Why the program could not start at all (e.g. `spawn pytest ENOENT`). */
  spawn_error?: string;
}

const TERM_GRACE_MS = 2_000;
/** How long leftover processes (servers a test forgot to stop) may outlive the runner before they are killed. */
const LINGER_MS = 500;
const WATCH_MS = 250;
/**
 * Runs one test command in its own process group, writing its output into `capture`'s log file. On timeout, cancellation
 * or normal exit, the whole tree is killed — grandchildren too — so no orphan outlives the run.
 */
export async function runProcess(
  spec: ProcessSpec,
  capture: OutputCapture,
): Promise<ProcessOutcome> {
  const started = performance.now();
  const [program, ...args] = spec.argv;
  const tree = new RunTree();
  const child = spawn(program!, args, {
    cwd: spec.cwd,
    env: tree.environment(spec.env),
    detached: true,
    // Straight into the log file: no pipe to wake the server for every line the runner flushes.
    stdio: ['ignore', capture.fd, capture.fd],
  });
  // Listened to before anything else: a spawn that fails (ENOENT, EMFILE) is this run's outcome,
  // never an unhandled 'error' event, which would end the server with every session on it.
  const ended = ending(child);
  let timedOut = false;
  let cancelled = false;
  tree.started(child.pid);
  // Descendants seen while the run lasts, for any that clear their environment (and so the run's cookie).
  const watch = setInterval(() => void tree.observe(), WATCH_MS);
  const kill = (signal: NodeJS.Signals) => tree.kill(signal);

  const stop = async () => {
    await kill('SIGTERM');
    setTimeout(() => void kill('SIGKILL'), TERM_GRACE_MS).unref();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    void stop();
  }, spec.timeoutMs);
  const onAbort = () => {
    cancelled = true;
    void stop();
  };
  spec.signal?.addEventListener('abort', onAbort, { once: true });
  if (spec.signal?.aborted) onAbort();

  // A sandbox killed from outside may leave its namespace's processes dying a moment longer.
  const leftBehind = () => !spec.pidNamespace || timedOut || cancelled;
  // The runner has exited: anything it left behind is killed.
  child.on('exit', () => {
    tree.rootExited();
    if (leftBehind()) setTimeout(() => void kill('SIGKILL'), LINGER_MS).unref();
  });

  const result = await ended;
  clearTimeout(timer);
  clearInterval(watch);
  spec.signal?.removeEventListener('abort', onAbort);
  if (leftBehind()) await tree.killAll();
  tree.release();
  const spawnFailed = 'error' in result && !timedOut && !cancelled;
  return {
    exit_code: spawnFailed ? 127 : (result.exitCode ?? null),
    signal: result.signal ?? null,
    timed_out: timedOut,
    cancelled,
    duration_ms: Math.round(performance.now() - started),
    ...(spawnFailed
      ? {
          spawn_error: `Command failed with ${result.code}: ${spec.argv.join(' ')}\n${result.error}`,
        }
      : {}),
  };
}

type Ended =
  | { exitCode: number | null; signal: NodeJS.Signals | null }
  | { error: string; code: string; exitCode: null; signal: null };

/** How the child ended: its exit, or the error that kept it from starting. */
function ending(child: ChildProcess): Promise<Ended> {
  return new Promise((resolve) => {
    // `on`, not `once`: a later error (a failed kill) must find a listener too; the first one counts.
    child.on('error', (error: NodeJS.ErrnoException) =>
      resolve({ error: error.message, code: error.code ?? 'error', exitCode: null, signal: null }),
    );
    child.once('exit', (exitCode, signal) => resolve({ exitCode, signal }));
  });
}
