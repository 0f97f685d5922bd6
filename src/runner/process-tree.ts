import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, openSync, readdirSync, readSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { promisify } from 'node:util';

/**
 * Every run's processes carry this variable (value: the run's id). Parentage alone cannot find a daemon that
 * double-forked and re-parented to init before anyone looked; the inherited environment still names the run,
 * as CI process-tree killers rely on.
 */
export const RUN_COOKIE = 'COACHGATE_RUN';

export interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** Opaque start-time token: a pid whose token changed was reused by an unrelated process. */
  start: string;
  /** The value of RUN_COOKIE in the process's environment, when readable. */
  cookie?: string;
}

const run = promisify(execFile);

/** All processes the server can see, or `undefined` where the platform cannot list them (Windows). */
export async function listProcesses(
  platform: NodeJS.Platform = process.platform,
  cookies = true,
): Promise<ProcessInfo[] | undefined> {
  if (platform === 'linux') return listFromProc(cookies);
  if (platform === 'win32') return undefined;
  // macOS and other Unixes: -E appends each process's environment to its command (own processes only).
  const { stdout } = await run(
    'ps',
    ['-A', '-E', '-ww', '-o', 'pid=,ppid=,pgid=,lstart=,command='],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  ).catch(() => ({ stdout: '' }));
  return parsePsOutput(stdout);
}

/** Parses `ps -o pid=,ppid=,pgid=,lstart=,command=` lines; `lstart` is five words (`Mon Nov 23 10:41:10 2026`). */
export function parsePsOutput(text: string): ProcessInfo[] {
  const processes: ProcessInfo[] = [];
  const cookie = new RegExp(`(?:^|\\s)${RUN_COOKIE}=(\\S+)`);
  for (const line of text.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+\s+\S+\s+\S+\s+\S+\s+\S+)\s?(.*)$/.exec(line);
    if (!match) continue;
    const value = cookie.exec(match[5]!)?.[1];
    processes.push({
      pid: Number(match[1]),
      ppid: Number(match[2]),
      pgid: Number(match[3]),
      start: match[4]!.replace(/\s+/g, ' '),
      ...(value ? { cookie: value } : {}),
    });
  }
  return processes;
}

async function listFromProc(cookies: boolean): Promise<ProcessInfo[]> {
  const pids = (await readdir('/proc').catch(() => [] as string[])).filter((entry) =>
    /^\d+$/.test(entry),
  );
  const found: ProcessInfo[] = [];
  for (const pid of pids) {
    const info = readProc(pid, cookies);
    if (info) found.push(info);
  }
  return found;
}

function readProc(entry: string, cookies: boolean): ProcessInfo | undefined {
  const info = parseProcStat(Number(entry), readProcFile(`/proc/${entry}/stat`));
  if (!info || !cookies) return info;
  // Readable only for the server's own user, which is every process a run can start.
  const environ = readProcFile(`/proc/${entry}/environ`);
  const prefix = `${RUN_COOKIE}=`;
  const value = environ.split('\0').find((variable) => variable.startsWith(prefix));
  return value ? { ...info, cookie: value.slice(prefix.length) } : info;
}

/** Reused by every /proc read: the files report size 0, so `readFile` would allocate 64 KiB for each. */
let procBuffer = Buffer.alloc(64 * 1024);

/**
 * A /proc file's text, or '' when the process is gone. Synchronous on purpose: a snapshot of a few hundred
 * processes takes a millisecond or two this way, where promise-based reads cost the server more CPU than
 * a short test run itself (the tree is watched four times a second).
 */
function readProcFile(file: string): string {
  let descriptor: number;
  try {
    descriptor = openSync(file, 'r');
  } catch {
    return '';
  }
  try {
    let length = 0;
    for (;;) {
      if (length === procBuffer.length) {
        const larger = Buffer.alloc(procBuffer.length * 2);
        procBuffer.copy(larger);
        procBuffer = larger;
      }
      const read = readSync(descriptor, procBuffer, length, procBuffer.length - length, null);
      if (read === 0) return procBuffer.toString('utf8', 0, length);
      length += read;
    }
  } catch {
    return '';
  } finally {
    closeSync(descriptor);
  }
}

/** `/proc/<pid>/stat`: the command name (field 2) may hold spaces and ')'; the fields after its last ')' are fixed. */
export function parseProcStat(pid: number, stat: string): ProcessInfo | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state): ppid is field 4, pgrp field 5, starttime field 22.
  const [ppid, pgid, start] = [Number(fields[1]), Number(fields[2]), fields[19]];
  // A zombie is already dead; it only waits for its parent (often init) to reap it.
  if (fields[0] === 'Z') return undefined;
  if (!Number.isInteger(ppid) || !Number.isInteger(pgid) || !start) return undefined;
  return { pid, ppid, pgid, start };
}

let childrenFiles: boolean | undefined;

/**
 * Every process below `rootPid`, read from `/proc/<pid>/task/<tid>/children` (Linux 3.5+): only the
 * run's own tree is read, where a snapshot reads every process on the machine, four times a second
 * for each run. Undefined where the kernel has no such file.
 */
export function descendantsFromChildren(rootPid: number): ProcessInfo[] | undefined {
  childrenFiles ??= existsSync(`/proc/${process.pid}/task/${process.pid}/children`);
  if (!childrenFiles) return undefined;
  const found: ProcessInfo[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    let threads: string[];
    try {
      threads = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone meanwhile
    }
    for (const thread of threads) {
      for (const child of readProcFile(`/proc/${pid}/task/${thread}/children`).split(' ')) {
        const info = child && parseProcStat(Number(child), readProcFile(`/proc/${child}/stat`));
        if (!info) continue;
        found.push(info);
        queue.push(info.pid);
      }
    }
  }
  return found;
}

/** Every process below `rootPid` in a snapshot. */
export function descendantsIn(processes: ProcessInfo[], rootPid: number): ProcessInfo[] {
  const children = new Map<number, ProcessInfo[]>();
  for (const info of processes) children.set(info.ppid, [...(children.get(info.ppid) ?? []), info]);
  const found: ProcessInfo[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

export interface KillPlan {
  /** Process ids to signal; negative ids are process groups. */
  signal: number[];
  /** Windows: `taskkill` argv that ends the whole tree. */
  taskkill?: string[];
}

export interface TreeState {
  cookie: string;
  /** The runner's pid while it has not been reaped (only then is the pid provably ours). */
  root?: number;
  /** Descendants seen during the run, pid → start token, so re-parented ones can still be proven ours. */
  seen: Map<number, string>;
  self: number;
}

/**
 * What to signal, decided from a snapshot, never from a bare pid: a process qualifies if it carries the run's
 * cookie, descends from the live runner, or was seen in the tree earlier with the same start time. Windows
 * cannot be listed here, so `taskkill /T` ends the tree while the runner lives.
 */
export function planKill(state: TreeState, processes: ProcessInfo[] | undefined): KillPlan {
  if (processes === undefined) {
    return state.root === undefined
      ? { signal: [] }
      : { signal: [], taskkill: ['taskkill', '/PID', String(state.root), '/T', '/F'] };
  }
  const byPid = new Map(processes.map((info) => [info.pid, info]));
  const ours = new Set<number>();
  for (const info of processes) if (info.cookie === state.cookie) ours.add(info.pid);
  if (state.root !== undefined) {
    ours.add(state.root);
    for (const info of descendantsIn(processes, state.root)) ours.add(info.pid);
  }
  for (const [pid, start] of state.seen) if (byPid.get(pid)?.start === start) ours.add(pid);
  ours.delete(state.self);
  // The group id is the runner's pid: signalled by number only while that pid is provably still ours.
  return { signal: state.root === undefined ? [...ours] : [-state.root, ...ours] };
}

/** Executes a plan; processes that are already gone are ignored. */
export async function executeKill(plan: KillPlan, signal: NodeJS.Signals): Promise<void> {
  if (plan.taskkill) {
    const [program, ...args] = plan.taskkill;
    await run(program!, args).catch(() => undefined);
  }
  for (const target of plan.signal) {
    try {
      process.kill(target, signal);
    } catch {
      // Already exited.
    }
  }
}

const liveTrees = new Set<RunTree>();

/**
 * One run's process tree: its cookie, its runner pid and what was seen below it. Live trees are registered so
 * the server can kill every one of them when it is stopped.
 */
export class RunTree {
  readonly cookie = randomUUID();
  private root: number | undefined;
  private readonly seen = new Map<number, string>();

  constructor(private readonly platform: NodeJS.Platform = process.platform) {
    liveTrees.add(this);
  }

  /** The run's environment with the cookie added. */
  environment(env: Record<string, string>): Record<string, string> {
    return { ...env, [RUN_COOKIE]: this.cookie };
  }

  started(pid: number | undefined): void {
    this.root = pid;
  }

  /** After the runner is reaped its pid may be reused, so it is no longer signalled by number. */
  rootExited(): void {
    this.root = undefined;
  }

  /** Remembers current descendants with their start times (for processes that clear their environment). */
  async observe(): Promise<void> {
    if (this.root === undefined) return;
    // Parentage only: the cookie sweep happens when killing; reading every environment 4× a second is waste.
    const descendants =
      (this.platform === 'linux' && descendantsFromChildren(this.root)) ||
      descendantsIn((await listProcesses(this.platform, false)) ?? [], this.root);
    for (const info of descendants) this.seen.set(info.pid, info.start);
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    await executeKill(this.plan(await listProcesses(this.platform)), signal);
  }

  private plan(processes: ProcessInfo[] | undefined): KillPlan {
    return planKill(
      { cookie: this.cookie, root: this.root, seen: this.seen, self: process.pid },
      processes,
    );
  }

  /**
   * SIGKILLs until a snapshot finds nothing of the run: a process that was forking during one sweep has its
   * child caught by the next.
   */
  async killAll(rounds = 5): Promise<void> {
    for (let round = 0; round < rounds; round++) {
      const plan = this.plan(await listProcesses(this.platform));
      if (plan.signal.length === 0 && !plan.taskkill) return;
      await executeKill(plan, 'SIGKILL');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  release(): void {
    liveTrees.delete(this);
  }
}

/**
 * Shutdown: SIGTERM every live run's tree, give them `graceMs` to exit, then SIGKILL what is left, so no test
 * process outlives the server.
 */
export async function killAllRuns(graceMs = 300): Promise<number> {
  const trees = [...liveTrees];
  await Promise.all(trees.map((tree) => tree.kill('SIGTERM')));
  if (trees.length > 0) await new Promise((resolve) => setTimeout(resolve, graceMs));
  await Promise.all(trees.map((tree) => tree.killAll()));
  return trees.length;
}
