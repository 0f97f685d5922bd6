import { readdir, readFile, writeFile } from 'node:fs/promises';

/** The kernel takes one autogroup change per 100 ms on the whole machine: tried again this often. */
const RETRY_MS = 50;
const ATTEMPTS = 40;

/**
 * Lowered runs go back to the server's own priority once no run of the foreground holds a core (the
 * Player's run ended): from then on they are what the Coach waits for. Kept lowered, a shared
 * machine's other sessions take their cores (a session at nice 10 weighs a tenth of one at 0): at
 * load 20 on two cores, a Go suite's trusted run took 14 s against 0.4 s for the raw run.
 * With autogroups the kernel shares the CPU between sessions first, so the session each run lowered
 * (every process this server started, however deep; one write per session) is what is lifted. A
 * process's own niceness stays: it ranks it only within its session, where all are lowered alike,
 * and an unprivileged process cannot lower it back. Without autogroups nothing is lifted.
 */
export async function liftLoweredRuns(): Promise<void> {
  const own = await readSession(process.pid);
  if (!own) return;
  const lifted = new Set<string>();
  for (const pid of await descendants(process.pid)) {
    const session = await readSession(pid);
    if (!session || session.nice <= own.nice || lifted.has(session.group)) continue;
    lifted.add(session.group);
    await setSessionNiceness(pid, own.nice);
  }
}

/** A process's autogroup; undefined without autogroups, or once it ended. */
async function readSession(pid: number): Promise<Session | undefined> {
  const text = await readFile(`/proc/${pid}/autogroup`, 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseSession(text);
}

export interface Session {
  group: string;
  nice: number;
}

/**
 * `/autogroup-12 nice 10`. The kernel prints nothing for a process outside any autogroup: one in
 * the first session (a container's, where a CI job's processes may all run) shares the root group,
 * which weighs as nice 0.
 */
export function parseSession(text: string): Session {
  const [, group, nice] = /^(\S+) nice (-?\d+)/.exec(text) ?? [];
  return group ? { group, nice: Number(nice) } : { group: '/', nice: 0 };
}

async function setSessionNiceness(pid: number, nice: number): Promise<void> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    try {
      return await writeFile(`/proc/${pid}/autogroup`, String(nice));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}

/** Every process below `root`, from /proc's parent links (none where there is no /proc). */
async function descendants(root: number): Promise<number[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const children = new Map<number, number[]>();
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
        // The command name may hold spaces and parentheses: the fields after its last ")".
        const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (!Number.isInteger(parent)) return;
        children.set(parent, [...(children.get(parent) ?? []), Number(entry)]);
      }),
  );
  const found: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
