import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/runner/execute.js';
import { OutputCapture } from '../../src/runner/output-capture.js';
import { RunQueue, type RunPriority } from '../../src/runner/run-queue.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-priority-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The lines a shell script prints when run as a run of that priority. */
async function printed(script: string, priority: RunPriority): Promise<string[]> {
  const log = path.join(scratch, `${priority}.log`);
  const capture = await OutputCapture.open(log);
  const env = { PATH: process.env.PATH ?? '' };
  const outcome = await runProcess(
    { argv: ['sh', '-c', script], cwd: scratch, env, timeoutMs: 20_000, priority },
    capture,
  );
  await capture.close();
  expect(outcome.exit_code).toBe(0);
  return readFileSync(log, 'utf8').trim().split('\n');
}

/** What `nice` prints (the niceness) for the run's own process and for a grandchild it starts. */
const niceness = async (priority: RunPriority) =>
  (await printed('nice; sh -c nice', priority)).map(Number);

const autogroups = existsSync('/proc/self/autogroup');

describe('trusted runs go beside the Player run, at a lower priority', () => {
  it('a background run and everything it starts run at a lower CPU priority', async () => {
    const own = os.getPriority();
    expect(await niceness('foreground')).toEqual([own, own]);
    const lowered = Math.min(19, own + 10);
    expect(await niceness('background')).toEqual([lowered, lowered]);
  });

  it.runIf(autogroups)(
    "Linux's autogroups: a background run's session is lowered, as a whole",
    async () => {
      // Each run is a session of its own, and the CPU is shared between sessions first. The server
      // lowers the session just after the spawn, so a grandchild waits (up to 5 s) to see it.
      const lowered =
        'for i in $(seq 50); do grep -q " nice 10$" /proc/self/autogroup && break; sleep 0.1; done';
      const session = async (priority: RunPriority, script = '') =>
        (await printed(`sh -c '${script} cat /proc/self/autogroup'`, priority))[0];
      expect(await session('foreground')).toMatch(/ nice 0$/);
      expect(await session('background', `${lowered};`)).toMatch(/ nice 10$/);
    },
  );

  it('background runs have slots of their own beside foreground runs, bounded alike', async () => {
    const queue = new RunQueue(1);
    const active = new Set<string>();
    const together: string[][] = [];
    const job = (name: string) => async () => {
      active.add(name);
      together.push([...active].sort());
      await new Promise((resolve) => setTimeout(resolve, 30));
      active.delete(name);
    };
    await Promise.all([
      queue.run('/player', job('player')),
      queue.run('/trusted', job('trusted'), 'background'),
      queue.run('/fail-to-pass', job('fail-to-pass'), 'background'),
    ]);
    expect(together).toContainEqual(['player', 'trusted']);
    expect(
      together.some((names) => names.includes('trusted') && names.includes('fail-to-pass')),
    ).toBe(false);
  });
});
