import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { taskStateDirectory } from '../../src/records/state-directory.js';
import { mirrorTampering } from '../../src/records/mirrored.js';
import { withTaskLock } from '../../src/records/task-lock.js';
import { readVerdictLog } from '../../src/records/verdict-log.js';
import { callTool, dataOf } from '../helpers/mcp.js';
import { connectOver, TRANSPORTS } from '../helpers/transports.js';

const TASK = 'TASK-7';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const dist = (module: string) =>
  JSON.stringify(new URL(`../../dist/${module}`, import.meta.url).href);
let worktree: string;
beforeEach(() => {
  worktree = mkdtempSync(path.join(os.tmpdir(), 'coachgate-crash-'));
  execFileSync('git', ['init', '-q'], { cwd: worktree });
});
afterEach(() => rmSync(worktree, { recursive: true, force: true }));

/** A real server-side writer: appends verdicts under the task lock until it is killed with SIGKILL. */
async function killWriterAfter(ms: number): Promise<void> {
  const script = `
    import { withTaskLock } from ${dist('records/task-lock.js')};
    import { appendVerdict, readVerdictLog } from ${dist('records/verdict-log.js')};
    const worktree = ${JSON.stringify(worktree)};
    for (;;) {
      await withTaskLock(worktree, '${TASK}', async () => {
        const turn = (await readVerdictLog(worktree, '${TASK}')).entries.length + 1;
        await appendVerdict(worktree, '${TASK}', { kind: 'verdict', turn, decision: 'feedback', status: 'in_progress', strikes: 0, recorded_at: 'now', rationale: 'x'.repeat(5000), issues: [] });
      });
    }`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
  // Kill it `ms` after its first record landed, so the kill hits a writer in full flow.
  const mirrorLog = path.join(worktree, '.guardkit/autobuild', TASK, 'verdicts.jsonl');
  for (let waited = 0; !existsSync(mirrorLog) && waited < 30_000; waited += 20) await sleep(20);
  await sleep(ms);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
}

const leftovers = async () => {
  const directories = [
    await taskStateDirectory(worktree, TASK),
    path.join(worktree, '.guardkit/autobuild', TASK),
  ];
  return directories.flatMap((directory) =>
    readdirSync(directory, { recursive: true, encoding: 'utf8' }).filter(
      (name) => name.includes('coachgate-tmp') || name.startsWith('.lock.'),
    ),
  );
};

describe('kill -9 during record writes', () => {
  it('the next call takes the dead lock at once, removes temp files and repairs the mirror from the state', async () => {
    for (const delay of [15, 60, 150, 300]) {
      await killWriterAfter(delay);
      const started = Date.now();
      await withTaskLock(worktree, TASK, async () => {
        expect(await leftovers()).toEqual([]);
        expect(await mirrorTampering(worktree, TASK)).toEqual([]);
      });
      expect(Date.now() - started).toBeLessThan(3_000);
      const log = await readVerdictLog(worktree, TASK);
      expect(log.chain.intact).toBe(true);
      expect(log.entries.length).toBeGreaterThan(0);
      expect(await mirrorTampering(worktree, TASK)).toEqual([]);
    }
  }, 60_000);
});

describe('kill -9 during a record write, then the next call through MCP', () => {
  it.each(TRANSPORTS)(
    'over %s: succeeds, and the mirror matches the state',
    async (kind) => {
      mkdirSync(path.join(worktree, '.guardkit/tasks'), { recursive: true });
      writeFileSync(
        path.join(worktree, '.guardkit/tasks', `${TASK}.md`),
        `---\nid: ${TASK}\ntitle: Crash safety\n---\n## Acceptance Criteria\n- [ ] AC-001: it works\n`,
      );
      const identity = ['-c', 'user.name=t', '-c', 'user.email=t@example.com'];
      execFileSync('git', ['add', '-A'], { cwd: worktree });
      execFileSync('git', [...identity, 'commit', '-q', '-m', 'task file'], { cwd: worktree });
      const { client, close } = await connectOver(kind, worktree);
      try {
        const args = { worktree, task_id: TASK };
        // The server pins the task on first touch, before any record of it exists.
        await callTool(client, 'task_status', args);
        await killWriterAfter(60);
        const report = { tests_passed: true, files_modified: ['README.md'] };
        expect(
          dataOf(await callTool(client, 'record_player_report', { ...args, turn: 1, report })),
        ).toMatchObject({ recorded: true });
        const status = dataOf(await callTool(client, 'task_status', args));
        expect(status.mirror_tampering).toEqual([]);
        expect(status.verdict_chain).toMatchObject({ intact: true, problems: [] });
        expect(status.verdict_chain.entries).toBeGreaterThan(0);
        expect(await leftovers()).toEqual([]);
      } finally {
        await close();
      }
    },
    60_000,
  );
});

describe('task locks cannot be wedged', () => {
  const lockDirectory = async () => path.join(await taskStateDirectory(worktree, TASK), '.lock');

  it('takes over a lock whose owner process is gone at once', async () => {
    const lock = await lockDirectory();
    mkdirSync(lock, { recursive: true });
    writeFileSync(
      path.join(lock, 'owner.json'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: os.hostname(), acquired_at: 'then' }),
    );
    const started = Date.now();
    expect(await withTaskLock(worktree, TASK, async () => 'done')).toBe('done');
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it.each([
    ['empty', ''],
    ['cut short', '{"pid": 12'],
    ['not an owner', '[]'],
  ])(
    'takes over a lock whose owner.json is %s (a write that failed) like a stale one',
    async (_, text) => {
      const lock = await lockDirectory();
      mkdirSync(lock, { recursive: true });
      writeFileSync(path.join(lock, 'owner.json'), text);
      const report = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
      try {
        expect(await withTaskLock(worktree, TASK, async () => 'done')).toBe('done');
        expect(report.mock.calls.map(([line]) => String(line)).join('')).toMatch(
          /taking over the task lock .*: its owner.json is empty or not JSON \(a write that failed\)/,
        );
      } finally {
        report.mockRestore();
      }
      expect(existsSync(lock)).toBe(false);
    },
  );

  it('reports and expires a lock with an mtime in the future and no owner', async () => {
    const lock = await lockDirectory();
    mkdirSync(lock, { recursive: true });
    writeFileSync(path.join(lock, 'not-an-owner'), '');
    const year2100 = new Date('2100-01-01T00:00:00Z');
    utimesSync(lock, year2100, year2100);
    const report = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const started = Date.now();
    expect(await withTaskLock(worktree, TASK, async () => 'done')).toBe('done');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(report.mock.calls.map(([text]) => String(text)).join('')).toMatch(
      /taking over the task lock .*: its mtime 2100-01-01T00:00:00.000Z is in the future/,
    );
    report.mockRestore();
  });
});
