import { describe, expect, it } from 'vitest';
import { RunQueue } from '../../src/runner/run-queue.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('RunQueue', () => {
  it('runs different worktrees in parallel up to the limit and one worktree strictly in order', async () => {
    const queue = new RunQueue(2);
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    const job = (name: string) => async () => {
      active++;
      peak = Math.max(peak, active);
      order.push(`start ${name}`);
      await pause(30);
      order.push(`end ${name}`);
      active--;
      return name;
    };
    const results = await Promise.all([
      queue.run('/a', job('a1')),
      queue.run('/a', job('a2')),
      queue.run('/b', job('b1')),
      queue.run('/c', job('c1')),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1', 'c1']);
    expect(peak).toBe(2);
    expect(order.indexOf('start a2')).toBeGreaterThan(order.indexOf('end a1'));
  });

  it('keeps serving a worktree after one of its runs failed', async () => {
    const queue = new RunQueue(1);
    await expect(queue.run('/a', async () => Promise.reject(new Error('boom')))).rejects.toThrow(
      'boom',
    );
    await expect(queue.run('/a', async () => 'next')).resolves.toBe('next');
  });
});
