import { existsSync } from 'node:fs';
import { findOnPath } from './platform.js';
import type { RunPriority } from './run-queue.js';

/**
 * Each lowered run's niceness. A foreground run beside a background one keeps its core. The
 * lowest runs are short (limited to the Player's test files); beside the full trusted run they take
 * about an eighth of a core it wants (the kernel's weights for nice 19 and 10 are 15 and 110), and
 * all of one it leaves idle: the run an approval waits on longest gets the CPU first.
 */
const NICENESS: Record<Exclude<RunPriority, 'foreground'>, string> = {
  background: '10',
  lowest: '19',
};

/** Linux's autogroup scheduling: the CPU is shared between sessions first. */
const AUTOGROUPS = process.platform === 'linux' && existsSync('/proc/self/autogroup');

let nice: Promise<string | undefined> | undefined;

/**
 * The command a lowered run starts, before it is sandboxed: the whole tree at a lower CPU priority
 * from its first instruction on.
 * - `nice` where the system has one (coreutils, BSD, busybox), found on the server's PATH. It runs
 *   the program in its place (same pid), so every process of the tree inherits the priority;
 *   setting it on the pid after the spawn would miss what the runner forked meanwhile.
 * - With autogroups a nice value ranks processes only within their session, and every run is a
 *   session of its own (`detached`, and bubblewrap's `--new-session` inside the sandbox). So a
 *   shell in front lowers the session it runs in, for every process in it; inside the sandbox
 *   that is bubblewrap's own new session. Without CAP_SYS_ADMIN the kernel takes one such write per
 *   100 ms on the whole machine (EAGAIN otherwise), and trusted runs start together, also in
 *   other tasks and servers: the shell tries again every 50 ms for up to 2 s (a CI machine
 *   running several test files at once needed more than the 0.3 s it once had), then runs the
 *   command in any case.
 */
export async function withPriority(
  argv: string[],
  priority: RunPriority | undefined,
): Promise<string[]> {
  if (priority === undefined || priority === 'foreground') return argv;
  const niceness = NICENESS[priority];
  nice ??= findOnPath('nice', process.env);
  const program = await nice;
  const niced = program ? [program, '-n', niceness, ...argv] : argv;
  if (!AUTOGROUPS) return niced;
  const lower = `{ echo ${niceness} > /proc/self/autogroup; } 2>/dev/null`;
  const retry = 'i=$((i + 1)); sleep 0.05';
  const script = `i=0; until ${lower} || [ $i -ge 40 ]; do ${retry}; done; exec "$@"`;
  return ['/bin/sh', '-c', script, 'sh', ...niced];
}
