import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { OutputCapture } from '../../src/runner/output-capture.js';
import { parseSession } from '../../src/runner/priority-lift.js';
import { RunQueue, type RunPriority } from '../../src/runner/run-queue.js';
import { runSandboxed, type Isolation } from '../../src/sandbox/run.js';
import { bwrapUsable } from '../helpers/bubblewrap.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-priority-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** How a run is confined: in bubblewrap where it works, and not at all. */
const ISOLATIONS: { name: string; isolation: Isolation }[] = [
  ...(bwrapUsable
    ? [{ name: 'sandboxed', isolation: { policy: { mode: 'required', network: 'none' } } } as const]
    : []),
  { name: 'unsandboxed', isolation: { policy: { mode: 'off', network: 'none' } } },
];

let runs = 0;

/** The lines a shell script prints when run as a run of that priority. */
async function printed(
  script: string,
  priority: RunPriority,
  isolation: Isolation,
): Promise<string[]> {
  const log = path.join(scratch, `${priority}-${(runs += 1)}.log`);
  const capture = await OutputCapture.open(log);
  const env = { PATH: process.env.PATH ?? '' };
  const outcome = await runSandboxed(
    { argv: ['sh', '-c', script], cwd: scratch, env, timeoutMs: 20_000, priority, isolation },
    capture,
  );
  await capture.close();
  expect(outcome.exit_code).toBe(0);
  // Without a sandbox the run prints the server's warning first.
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .filter((line) => !line.startsWith('[coachgate]'));
}

const autogroups = existsSync('/proc/self/autogroup');

describe.each(ISOLATIONS)(
  'trusted runs go beside the Player run, at a lower priority ($name)',
  ({ isolation }) => {
    it('a background run and everything it starts run at a lower CPU priority', async () => {
      const niceness = async (priority: RunPriority) =>
        (await printed('nice; sh -c nice', priority, isolation)).map(Number);
      const own = os.getPriority();
      expect(await niceness('foreground')).toEqual([own, own]);
      const lowered = Math.min(19, own + 10);
      expect(await niceness('background')).toEqual([lowered, lowered]);
      expect(await niceness('lowest')).toEqual([19, 19]);
    });

    it.runIf(autogroups)(
      "Linux's autogroups: a background run's session is lowered, as a whole, from its start",
      async () => {
        // Each run is a session of its own (bubblewrap starts one more inside the sandbox), and the
        // CPU is shared between sessions first. Read at once, by the command and by a grandchild.
        const session = async (priority: RunPriority) =>
          printed(
            'cat /proc/self/autogroup; sh -c "cat /proc/self/autogroup"',
            priority,
            isolation,
          );
        for (const line of await session('foreground')) expect(line).toMatch(/ nice 0$/);
        for (const line of await session('background')) expect(line).toMatch(/ nice 10$/);
        for (const line of await session('lowest')) expect(line).toMatch(/ nice 19$/);
        // Trusted runs start together, three per approval and several approvals at once (tasks,
        // servers, a CI machine's test files), and the kernel takes one such change per 100 ms.
        const approval: RunPriority[] = ['background', 'lowest', 'lowest'];
        const priorities = [...approval, ...approval, ...approval];
        const together = await Promise.all(priorities.map((priority) => session(priority)));
        expect(together.map((lines) => lines.map((line) => line.split(' nice ')[1]))).toEqual(
          priorities.map((priority) => (priority === 'background' ? ['10', '10'] : ['19', '19'])),
        );
      },
    );

    it.runIf(autogroups)(
      "once the Player's run ends, the lowered runs still going are lifted back: the Coach waits for them",
      async () => {
        const queue = new RunQueue(2);
        const own = String(parseSession(readFileSync('/proc/self/autogroup', 'utf8')).nice);
        const started = path.join(scratch, `started-${(runs += 1)}`);
        const released = path.join(scratch, `released-${runs}`);
        let endPlayerRun = () => undefined as void;
        const player = queue.run('/player', () => new Promise<void>((end) => (endPlayerRun = end)));
        // The session's niceness while the Player's run holds its core, then once it ended (the
        // lift is looked for for up to 10 s: it is the server's, made when the Player's run ends).
        const trusted = queue.run(
          '/trusted',
          () =>
            printed(
              `cat /proc/self/autogroup; : > ${started}; until [ -e ${released} ]; do sleep 0.05; done; i=0; until grep -q ' nice ${own}$' /proc/self/autogroup || [ $i -ge 200 ]; do sleep 0.05; i=$((i + 1)); done; cat /proc/self/autogroup`,
              'background',
              isolation,
            ),
          'background',
        );
        // The first line is printed before the Player's run ends.
        await vi.waitFor(() => expect(existsSync(started)).toBe(true), { timeout: 60_000 });
        endPlayerRun();
        await player;
        writeFileSync(released, '');
        const lines = await trusted;
        expect(lines.map((line) => line.split(' nice ')[1])).toEqual(['10', own]);
      },
    );
  },
);

describe("a session's autogroup", () => {
  it('outside any autogroup (the first session, as in a container) weighs as nice 0', () => {
    expect(parseSession('/autogroup-12 nice 10\n')).toEqual({ group: '/autogroup-12', nice: 10 });
    // The kernel prints nothing for the root group, where a CI job's processes may all run.
    expect(parseSession('')).toEqual({ group: '/', nice: 0 });
  });
});

describe('the run queue', () => {
  it('each priority has slots of its own beside the others, bounded alike', async () => {
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
      queue.run('/baseline', job('baseline'), 'background'),
      queue.run('/fail-to-pass', job('fail-to-pass'), 'lowest'),
      queue.run('/new-tests', job('new-tests'), 'lowest'),
    ]);
    // The short runs limited to the Player's files go beside the full ones, not after them.
    expect(together).toContainEqual(['fail-to-pass', 'player', 'trusted']);
    const both = (first: string, second: string) =>
      together.some((names) => names.includes(first) && names.includes(second));
    expect(both('trusted', 'baseline')).toBe(false);
    expect(both('fail-to-pass', 'new-tests')).toBe(false);
  });
});
