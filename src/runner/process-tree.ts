import { readdir, readFile } from 'node:fs/promises';

/**
 * Every live descendant of `rootPid`. Killing the process group is not enough: a test may start a daemon
 * with setsid(), which leaves the group but stays a descendant until its parent exits.
 */
export async function descendantPids(rootPid: number): Promise<number[]> {
  const parents = await parentMap();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  const found: number[] = [];
  const queue = [rootPid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

async function parentMap(): Promise<Map<number, number>> {
  const map = new Map<number, number>();
  const entries = await readdir('/proc').catch(() => [] as string[]);
  await Promise.all(
    entries
      .filter((entry) => /^\d+$/.test(entry))
      .map(async (entry) => {
        const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
        // The command name (field 2) may contain spaces and parentheses; the fields after its last ')' are fixed.
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (Number.isInteger(ppid)) map.set(Number(entry), ppid);
      }),
  );
  return map;
}

/**
 * Signals the process group, every current descendant and any `known` earlier descendants (which were
 * re-parented once their parent died); ignores processes that are already gone.
 */
export async function killTree(pid: number, signal: NodeJS.Signals, known: Iterable<number> = []): Promise<void> {
  const descendants = await descendantPids(pid);
  for (const target of new Set([-pid, pid, ...descendants, ...known])) {
    try {
      process.kill(target, signal);
    } catch {
      // Already exited.
    }
  }
}
