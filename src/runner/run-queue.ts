import os from 'node:os';
import { liftLoweredRuns } from './priority-lift.js';

/**
 * The Player's run (and gates) the caller waits for; trusted runs that go beside it; and the
 * trusted runs limited to the Player's test files, short beside the full one an approval waits on.
 */
export type RunPriority = 'foreground' | 'background' | 'lowest';

/**
 * Bounds concurrent test runs: runs on different worktrees proceed in parallel up to `limit` (default:
 * the number of CPUs) per priority; two runs on the same worktree always wait for each other, since
 * they share its files. Background runs start at a lower CPU priority (src/runner/priority.ts), so they
 * take the cores a foreground run leaves idle (while its tests sleep or wait, or once it has ended)
 * rather than its own: an approval's trusted runs then finish beside the Player's run, not after it.
 * The lowest runs have slots of their own too, so a short run never waits for a long one to end.
 * When the last foreground run ends, the lowered runs still going are lifted back
 * (src/runner/priority-lift.ts): the caller now waits for them.
 */
export class RunQueue {
  private readonly pools: Record<RunPriority, { active: number; waiting: (() => void)[] }> = {
    foreground: { active: 0, waiting: [] },
    background: { active: 0, waiting: [] },
    lowest: { active: 0, waiting: [] },
  };
  private readonly perWorktree = new Map<string, Promise<unknown>>();

  constructor(private readonly limit = os.availableParallelism()) {}

  private hasLoweredRuns(): boolean {
    return this.pools.background.active + this.pools.lowest.active > 0;
  }

  run<T>(
    worktree: string,
    work: () => Promise<T>,
    priority: RunPriority = 'foreground',
  ): Promise<T> {
    const previous = this.perWorktree.get(worktree) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.withSlot(work, priority));
    const tail = next.catch(() => undefined);
    this.perWorktree.set(worktree, tail);
    void tail.then(() => {
      if (this.perWorktree.get(worktree) === tail) this.perWorktree.delete(worktree);
    });
    return next;
  }

  private async withSlot<T>(work: () => Promise<T>, priority: RunPriority): Promise<T> {
    const pool = this.pools[priority];
    if (pool.active >= this.limit) await new Promise<void>((resolve) => pool.waiting.push(resolve));
    pool.active++;
    try {
      return await work();
    } finally {
      pool.active--;
      pool.waiting.shift()?.();
      if (priority === 'foreground' && pool.active === 0 && this.hasLoweredRuns())
        void liftLoweredRuns();
    }
  }
}

/** One queue per server process: every session's runs share the machine. */
export const runQueue = new RunQueue();
