import os from 'node:os';

/**
 * Bounds concurrent test runs: runs on different worktrees proceed in parallel up to `limit` (default: the
 * number of CPUs); two runs on the same worktree always wait for each other, since they share its files.
 */
export class RunQueue {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  private readonly perWorktree = new Map<string, Promise<unknown>>();

  constructor(private readonly limit = os.availableParallelism()) {}

  run<T>(worktree: string, work: () => Promise<T>): Promise<T> {
    const previous = this.perWorktree.get(worktree) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.withSlot(work));
    const tail = next.catch(() => undefined);
    this.perWorktree.set(worktree, tail);
    void tail.then(() => {
      if (this.perWorktree.get(worktree) === tail) this.perWorktree.delete(worktree);
    });
    return next;
  }

  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await work();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

/** One queue per server process: every session's runs share the machine. */
export const runQueue = new RunQueue();
