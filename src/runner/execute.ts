import { existsSync } from 'node:fs';
import { RunTree } from './process-tree.js';
import type { OutputCapture } from './output-capture.js';
import { findOnPath } from './platform.js';
import type { RunPriority } from './run-queue.js';

export interface ProcessSpec {
  /** argv[0] is the program; never passed through a shell. */
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Background: the whole tree runs at a lower CPU priority (see src/runner/run-queue.ts). */
  priority?: RunPriority;
  /**
   * The program is a sandbox whose command runs in a PID namespace of its own: when the program
   * has exited by itself, nothing of the run is left, so the machine's processes are not searched
   * for it (a sweep reads every process: about 4 ms on a run's path).
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
/** A background run's niceness: a foreground run beside it keeps its core. */
const BACKGROUND_NICENESS = '10';

/** Linux's autogroup scheduling: the CPU is shared between sessions first. */
const AUTOGROUPS = process.platform === 'linux' && existsSync('/proc/self/autogroup');

/**
 * With autogroups a nice value ranks processes only within their session, and every run is a
 * session of its own (`detached`, and bubblewrap's `--new-session` inside the sandbox). So a
 * background run's command starts behind a shell that lowers its session, for every process in it,
 * from the command's first instruction on. It is applied to the command that runs inside the
 * sandbox, after bubblewrap's own new session. Without CAP_SYS_ADMIN the kernel takes one such
 * write per 100 ms on the whole machine (EAGAIN otherwise), and trusted runs start together: the
 * shell tries again, ten times at most, 30 ms apart. A kernel without autogroups has no such file,
 * and `nice` ({@link withPriority}) does the work.
 */
export function inLoweredSession(argv: string[], priority: RunPriority | undefined): string[] {
  if (priority !== 'background' || !AUTOGROUPS) return argv;
  const lower = `{ echo ${BACKGROUND_NICENESS} > /proc/self/autogroup; } 2>/dev/null`;
  const retry = 'i=$((i + 1)); sleep 0.03';
  const script = `i=0; until ${lower} || [ $i -ge 10 ]; do ${retry}; done; exec "$@"`;
  return ['/bin/sh', '-c', script, 'sh', ...argv];
}

/**
 * `nice` where the system has one (coreutils, BSD, busybox). It runs the program in its place (same
 * pid), so every process of the tree inherits the priority from its first instruction on; setting it
 * on the pid after the spawn would miss what the runner forked meanwhile.
 */
let nice: Promise<string | undefined> | undefined;
async function withPriority(argv: string[], priority: RunPriority | undefined): Promise<string[]> {
  if (priority !== 'background') return argv;
  nice ??= findOnPath('nice', process.env);
  const program = await nice;
  return program ? [program, '-n', BACKGROUND_NICENESS, ...argv] : argv;
}

/**
 * Runs one test command in its own process group, writing its output into `capture`'s log file. On timeout, cancellation
 * or normal exit, the whole tree is killed — grandchildren too — so no orphan outlives the run.
 */
export async function runProcess(
  spec: ProcessSpec,
  capture: OutputCapture,
): Promise<ProcessOutcome> {
  const started = performance.now();
  const [program, ...args] = await withPriority(spec.argv, spec.priority);
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
