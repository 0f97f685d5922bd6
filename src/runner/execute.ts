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
  // Imported on the first run, not at start-up: the server must answer tools/list quickly.
  const { execa } = await import('execa');
  // execa's types accept descriptor literals only; at run time any open descriptor is passed as is.
  const logDescriptor = capture.fd as 3;
  const child = execa(program!, args, {
    cwd: spec.cwd,
    env: tree.environment(spec.env),
    extendEnv: false,
    detached: true,
    // Straight into the log file: no pipe to wake the server for every line the runner flushes.
    stdin: 'ignore',
    stdout: logDescriptor,
    stderr: logDescriptor,
    reject: false,
    cleanup: true,
  });
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

  const result = await child;
  clearTimeout(timer);
  clearInterval(watch);
  spec.signal?.removeEventListener('abort', onAbort);
  if (leftBehind()) await tree.killAll();
  tree.release();
  const spawnFailed =
    result.failed &&
    result.exitCode === undefined &&
    result.signal === undefined &&
    !timedOut &&
    !cancelled;
  return {
    exit_code: spawnFailed ? 127 : (result.exitCode ?? null),
    signal: result.signal ?? null,
    timed_out: timedOut,
    cancelled,
    duration_ms: Math.round(performance.now() - started),
    ...(spawnFailed ? { spawn_error: result.shortMessage ?? result.message } : {}),
  };
}
