import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVED_META } from '../../src/server/detached-calls.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { processesWith } from '../helpers/processes.js';
import { connectOver } from '../helpers/transports.js';
import { GOOD_CALC, hasPytest, pythonTaskPerTest, TASK } from '../helpers/python-task.js';

/**
 * Calls longer than the client waits, through a real SDK client: each suite lasts a few seconds and
 * the client's request timeout is set shorter, as the SDK's default 60 s is for a real suite.
 */
const SHORT_TIMEOUT_MS = 1_000;
const slowTest = (seconds: number) =>
  `import time\n\n\ndef test_slow():\n    time.sleep(${seconds})\n`;

const repos: TempRepo[] = [];
afterEach(() => {
  for (const repo of repos.splice(0)) repo.remove();
});

function project(files: Record<string, string>): TempRepo {
  const repo = makeRepo({ '.gitignore': '.venv/\n', ...files });
  repos.push(repo);
  return repo;
}

/** A tool called as an MCP task by the SDK's client; the task's status messages along the way. */
async function asTask(client: Client, name: string, args: Record<string, unknown>) {
  const statuses: string[] = [];
  let result: CallToolResult | undefined;
  const stream = client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    { timeout: SHORT_TIMEOUT_MS },
  );
  for await (const message of stream) {
    if (message.type === 'taskCreated') statuses.push(`created ${message.task.status}`);
    if (message.type === 'taskStatus') statuses.push(message.task.statusMessage ?? '');
    if (message.type === 'result') result = message.result as CallToolResult;
    if (message.type === 'error') throw message.error;
  }
  return { result: result!, statuses };
}

function storedRuns(repo: TempRepo): string[] {
  const dir = path.join(repo.dir, '.guardkit/autobuild/TASK-1/runs');
  return readdirSync(dir).filter((file) => file.endsWith('.json'));
}

/** The stored runs' outcomes, oldest first. */
function storedOutcomes(repo: TempRepo): { status: string; cancelled: boolean }[] {
  const dir = path.join(repo.dir, '.guardkit/autobuild/TASK-1/runs');
  return storedRuns(repo)
    .sort()
    .map((file) => JSON.parse(readFileSync(path.join(dir, file), 'utf8')))
    .map(({ status, cancelled }) => ({ status, cancelled }));
}

describe.skipIf(!hasPytest)('calls that outlast the client', () => {
  const tasks = pythonTaskPerTest();

  it('run as MCP tasks to a recorded approval, with the step in progress as status', async () => {
    const { client, call } = await tasks.start(
      { 'calc.py': GOOD_CALC },
      { 'tests/test_slow.py': slowTest(3) },
    );
    // The client learns from the listing which tools support tasks.
    const { tools } = await client.listTools();
    const long = tools.filter((tool) => tool.execution?.taskSupport === 'optional');
    expect(long.map((tool) => tool.name).sort()).toEqual([
      'check_test_integrity',
      'record_verdict',
      'run_independent_tests',
    ]);
    const args = { worktree: tasks.current!.repo.dir, task_id: TASK };
    const run = await asTask(client, 'run_independent_tests', args);
    expect(dataOf(run.result)).toMatchObject({ status: 'passed', counts: { passed: 3 } });
    expect(run.statuses[0]).toBe('created working');
    expect(run.statuses).toContainEqual(expect.stringMatching(/tests running for \d+ s/));
    const verdict = await asTask(client, 'record_verdict', {
      ...args,
      turn: 1,
      decision: 'approve',
      rationale: 'done',
      evidence: [{ criterion: 'AC-001', test: 'test_divide_by_zero' }],
    });
    // Its trusted runs started beside the run: how much of them is left to wait for depends on the
    // machine, so its status messages are not asserted; the approval is.
    expect(verdict.statuses[0]).toBe('created working');
    expect(textOf(verdict.result)).toMatch(new RegExp(`^APPROVED ${TASK} at turn 1`));
    const status = dataOf(await call('task_status', {}));
    expect(status).toMatchObject({ status: 'approved' });
  });

  it('stop the run and its process tree on tasks/cancel (stdio)', async () => {
    const marker = `61.${process.pid}`;
    const repo = project({
      'tests/test_slow.py': `import subprocess, time\n\ndef test_slow():\n    subprocess.Popen(["sleep", "${marker}"])\n    time.sleep(60)\n`,
    });
    // The built server over stdio: the run's processes are its children.
    const { client, close } = await connectOver('stdio', repo.dir);
    try {
      await client.listTools();
      const stream = client.experimental.tasks.callToolStream(
        { name: 'run_independent_tests', arguments: { worktree: repo.dir, task_id: 'TASK-1' } },
        CallToolResultSchema,
      );
      let taskId = '';
      for await (const message of stream) {
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        // Cancelled once the tests run, however long a busy machine takes to get there.
        if (message.type === 'taskStatus' && /tests running/.test(message.task.statusMessage ?? ''))
          break;
      }
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(cancelled.status).toBe('cancelled');
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(processesWith(marker)).toEqual([]);
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    } finally {
      await close();
    }
  }, 120_000);

  it('complete without tasks when the client resets its timeout on progress', async () => {
    const repo = project({ 'tests/test_slow.py': slowTest(7) });
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      const progress: string[] = [];
      // Progress comes every 2.5 s: 4 s of silence is allowed, the suite takes 7 s.
      const result = (await client.callTool(
        { name: 'run_independent_tests', arguments: { worktree: repo.dir, task_id: 'TASK-1' } },
        undefined,
        {
          timeout: 4_000,
          resetTimeoutOnProgress: true,
          onprogress: (update) => progress.push(update.message ?? ''),
        },
      )) as CallToolResult;
      expect(dataOf(result)).toMatchObject({ status: 'passed' });
      expect(progress.length).toBeGreaterThanOrEqual(2);
    } finally {
      await close();
    }
  });

  it("serve a timed-out call's result to the next identical call, once, without running again (HTTP)", async () => {
    const repo = project({ 'tests/test_slow.py': slowTest(3) });
    const { client, close } = await connectOver('http', repo.dir);
    const args = { worktree: repo.dir, task_id: 'TASK-1' };
    try {
      await expect(
        client.callTool({ name: 'run_independent_tests', arguments: args }, undefined, {
          timeout: SHORT_TIMEOUT_MS,
        }),
      ).rejects.toThrow(/Request timed out/);
      // Asked again at once: the run still goes on, and this call waits for it, with progress.
      const waits: string[] = [];
      const served = (await client.callTool(
        { name: 'run_independent_tests', arguments: args },
        undefined,
        { onprogress: (update) => waits.push(update.message ?? '') },
      )) as CallToolResult;
      expect(waits[0]).toMatch(
        /^waiting for the same call started \d+ s ago, whose client timed out$/,
      );
      expect(dataOf(served)).toMatchObject({ status: 'passed', counts: { passed: 1 } });
      expect(textOf(served)).toMatch(/^Served from the same call started at .*timed out/);
      expect(served._meta?.[SERVED_META]).toMatchObject({ client: 'timed out' });
      expect(storedRuns(repo)).toHaveLength(1);
      expect(storedRuns(repo)[0]).toContain(dataOf(served).run_id);
      // Served once: the next call runs the tests again.
      const again = await callTool(client, 'run_independent_tests', args);
      expect(again._meta?.[SERVED_META]).toBeUndefined();
      expect(dataOf(again).run_id).not.toBe(dataOf(served).run_id);
      expect(storedRuns(repo)).toHaveLength(2);
      // The tasks the SDK makes for plain calls are not the client's to list.
      expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
    } finally {
      await close();
    }
  });

  it('run again when the tree changed since the timed-out call', async () => {
    const repo = project({ 'tests/test_slow.py': slowTest(3) });
    const { client, close } = await connect({ roots: [repo.dir] });
    const args = { worktree: repo.dir, task_id: 'TASK-1' };
    try {
      await expect(
        client.callTool({ name: 'run_independent_tests', arguments: args }, undefined, {
          timeout: SHORT_TIMEOUT_MS,
        }),
      ).rejects.toThrow(/Request timed out/);
      repo.write('tests/test_more.py', 'def test_more():\n    assert True\n');
      const fresh = await callTool(client, 'run_independent_tests', args);
      expect(fresh._meta?.[SERVED_META]).toBeUndefined();
      expect(dataOf(fresh)).toMatchObject({ status: 'passed', counts: { passed: 2 } });
      // The timed-out call still ran to the end and stored its record.
      const finished = { status: 'passed', cancelled: false };
      expect(storedOutcomes(repo)).toEqual([finished, finished]);
    } finally {
      await close();
    }
  });
});
