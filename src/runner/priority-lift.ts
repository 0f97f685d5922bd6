import { readdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';

/** The kernel takes one autogroup change per 100 ms on the whole machine: tried again this often. */
const RETRY_MS = 50;
const ATTEMPTS = 40;

/**
 * Lowered runs go back to the server's own priority once no run of the foreground holds a core (the
 * Player's run ended): from then on they are what the Coach waits for. Kept lowered, a shared
 * machine's other sessions take their cores (a session at nice 10 weighs a tenth of one at 0): at
 * load 20 on two cores, a Go suite's trusted run took 14 s against 0.4 s for the raw run.
 * Every process this server started, however deep, is lifted: with autogroups, the session each
 * run lowered (one write per session); the process's own niceness too where the system lets an
 * unprivileged process lower it back (elsewhere only the sessions are lifted).
 */
export async function liftLoweredRuns(): Promise<void> {
  const own = await sessionNiceness(process.pid);
  const sessions = new Set<string>();
  for (const pid of await descendants(process.pid)) {
    try {
      if (os.getPriority(pid) > os.getPriority()) os.setPriority(pid, os.getPriority());
    } catch {
      // Gone meanwhile, or not permitted: the session's lift below is what counts.
    }
    const session = await readFile(`/proc/${pid}/autogroup`, 'utf8').catch(() => '');
    const [, group, nice] = /^(\S+) nice (-?\d+)/.exec(session) ?? [];
    if (!group || own === undefined || Number(nice) <= own || sessions.has(group)) continue;
    sessions.add(group);
    await setSessionNiceness(pid, own);
  }
}

async function sessionNiceness(pid: number): Promise<number | undefined> {
  const session = await readFile(`/proc/${pid}/autogroup`, 'utf8').catch(() => '');
  const nice = / nice (-?\d+)/.exec(session)?.[1];
  return nice === undefined ? undefined : Number(nice);
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
