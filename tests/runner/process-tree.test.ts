import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runProcess } from '../../src/runner/execute.js';
import { OutputCapture } from '../../src/runner/output-capture.js';
import {
  descendantsFromChildren,
  descendantsIn,
  listProcesses,
  parseProcStat,
  parsePsOutput,
  planKill,
  RUN_COOKIE,
  type ProcessInfo,
} from '../../src/runner/process-tree.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-tree-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A process is gone when it no longer exists or is a zombie waiting to be reaped (it runs nothing). */
function processGone(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return true;
  }
}

const hasSetsid =
  process.platform === 'linux' &&
  (() => {
    try {
      execFileSync('setsid', ['--version'], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

async function runScript(script: string): Promise<number[]> {
  const log = path.join(scratch, `${Math.random()}.log`);
  const capture = await OutputCapture.open(log);
  const env = Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const outcome = await runProcess(
    { argv: ['sh', '-c', script], cwd: scratch, env, timeoutMs: 20_000 },
    capture,
  );
  await capture.close();
  expect(outcome.exit_code).toBe(0);
  const pids = readFileSync(path.join(scratch, 'pids'), 'utf8').trim().split(/\s+/).map(Number);
  rmSync(path.join(scratch, 'pids'));
  return pids;
}

describe.skipIf(!hasSetsid)('no daemon outlives a run on Linux (needs setsid)', () => {
  it('kills a double-forked setsid daemon whose parent exits at once', async () => {
    // The runner exits immediately; the daemon is re-parented to init before any watcher can see it.
    const pids = await runScript(`(setsid sh -c 'echo $$ >> pids; exec sleep 300' &) ; sleep 0.2`);
    expect(pids).toHaveLength(1);
    expect(processGone(pids[0]!)).toBe(true);
  });

  it('kills daemons started with setsid -f, and their children', async () => {
    const script = `setsid -f sh -c 'sleep 300 & echo $! >> pids; echo $$ >> pids; wait'; sleep 0.2`;
    const pids = await runScript(script);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(processGone(pid), `pid ${pid}`).toBe(true);
  });

  it('kills a daemon started in the last instant before the runner exits', async () => {
    const pids = await runScript(
      `setsid -f sh -c 'echo $$ >> pids; exec sleep 300'; while [ ! -s pids ]; do :; done`,
    );
    expect(processGone(pids[0]!)).toBe(true);
  });
});

describe.runIf(process.platform === 'linux')('a run watched on Linux', () => {
  it("reads only the run's tree, and finds what a snapshot of every process finds", async () => {
    // A runner (sh) with a child that forked a grandchild of its own: the watch must see both.
    const runner = spawn(
      'sh',
      ['-c', `node -e "require('node:child_process').spawn('sleep', ['30'])" & sleep 30 & wait`],
      { stdio: 'ignore', detached: true },
    );
    try {
      const pids = (found: { pid: number }[] | undefined) => found?.map((info) => info.pid).sort();
      let seen: number[] | undefined;
      for (let tries = 0; tries < 100 && (seen?.length ?? 0) < 3; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = pids(descendantsFromChildren(runner.pid!));
      }
      expect(seen).toHaveLength(3); // node, its sleep, and the runner's own sleep
      expect(seen).toEqual(
        pids(descendantsIn((await listProcesses('linux', false))!, runner.pid!)),
      );
    } finally {
      process.kill(-runner.pid!, 'SIGKILL'); // its whole group
    }
  });
});

describe("kill plans signal only processes provably the run's", () => {
  const base = { cookie: 'run-1', seen: new Map<number, string>(), self: 10 };
  const proc = (pid: number, ppid: number, extra: Partial<ProcessInfo> = {}): ProcessInfo => ({
    pid,
    ppid,
    pgid: pid,
    start: `t${pid}`,
    ...extra,
  });

  it("takes the live runner's group, its descendants and every cookie holder", () => {
    const snapshot = [
      proc(100, 1),
      proc(101, 100),
      proc(102, 101),
      proc(200, 1, { cookie: 'run-1' }),
      proc(300, 1, { cookie: 'run-2' }),
      proc(400, 1),
    ];
    expect(planKill({ ...base, root: 100 }, snapshot).signal.sort((a, b) => a - b)).toEqual([
      -100, 100, 101, 102, 200,
    ]);
  });

  it('after the runner is reaped, signals neither its pid nor its group by number', () => {
    const snapshot = [proc(100, 1), proc(101, 100, { cookie: 'run-1' })];
    expect(planKill({ ...base, root: undefined }, snapshot).signal).toEqual([101]);
  });

  it('skips a remembered pid that an unrelated process has reused (different start time)', () => {
    const seen = new Map([
      [500, 't500'],
      [600, 'old-start'],
    ]);
    const snapshot = [proc(500, 1), proc(600, 1)];
    expect(planKill({ ...base, seen }, snapshot).signal).toEqual([500]);
  });

  it('never signals the server itself, even if it carries the cookie', () => {
    expect(planKill({ ...base }, [proc(10, 1, { cookie: 'run-1' })]).signal).toEqual([]);
  });

  it('Windows: ends the tree with taskkill /T /F while the runner lives, nothing once it is gone', () => {
    expect(planKill({ ...base, root: 4242 }, undefined)).toEqual({
      signal: [],
      taskkill: ['taskkill', '/PID', '4242', '/T', '/F'],
    });
    expect(planKill({ ...base }, undefined)).toEqual({ signal: [] });
  });

  it('macOS: reads pid, ppid, group, start time and the cookie from ps -E output', () => {
    const text = [
      '  412     1   412 Mon Nov 23 10:41:10 2026     /usr/sbin/syslogd',
      ` 9001  9000  9000 Mon Nov 23 10:41:12 2026     sleep 300 HOME=/Users/a ${RUN_COOKIE}=abc-1 PATH=/bin`,
    ].join('\n');
    expect(parsePsOutput(text)).toEqual([
      { pid: 412, ppid: 1, pgid: 412, start: 'Mon Nov 23 10:41:10 2026' },
      { pid: 9001, ppid: 9000, pgid: 9000, start: 'Mon Nov 23 10:41:12 2026', cookie: 'abc-1' },
    ]);
  });

  it('Linux: parses /proc stat lines whose command name holds spaces and parentheses, and skips zombies', () => {
    const fields = (state: string) => `${state} 7 8 8 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 123456 0 0`;
    expect(parseProcStat(9, `9 (a) (b c) ${fields('S')}`)).toEqual({
      pid: 9,
      ppid: 7,
      pgid: 8,
      start: '123456',
    });
    expect(parseProcStat(9, `9 (sleep) ${fields('Z')}`)).toBeUndefined();
  });
});
