import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { greetingProject } from './helpers/node-project.js';
import { processesWith } from './helpers/processes.js';
import type { TempRepo } from './helpers/git-repo.js';
import { CLI as cli } from './helpers/cli.js';

const repos: TempRepo[] = [];
afterAll(() => repos.forEach((repo) => repo.remove()));

/** The coachgate binary over raw stdio, so tests control every byte and how the server is stopped. */
function startServer(root: string) {
  const child = spawn(process.execPath, [cli, '--root', root], {
    stdio: 'pipe',
  }) as ChildProcessWithoutNullStreams;
  const answers: Record<string, any>[] = [];
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    for (let at = stdout.indexOf('\n'); at !== -1; at = stdout.indexOf('\n')) {
      answers.push(JSON.parse(stdout.slice(0, at)));
      stdout = stdout.slice(at + 1);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let closed = false; // exited, and its output read to the end
  child.on('close', () => (closed = true));
  const send = (message: unknown) =>
    child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  // Waits as long as the server lives (the test's timeout bounds it): a deadline of its own would
  // fail a slow answer on a busy machine.
  const answer = async (id: number | string) => {
    for (;;) {
      const found = answers.find((message) => message.id === id);
      if (found) return found;
      if (closed) throw new Error(`no answer to ${id}: the server exited; stderr: ${stderr}`);
      await sleep(20);
    }
  };
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 't', version: '0' },
    },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return { child, answers, send, answer, exited, stderr: () => stderr };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Until the test run has started `count` processes: a run that never does fails at the test's timeout. */
async function waitForStarts(file: string, count: number): Promise<void> {
  while (!existsSync(file) || readFileSync(file, 'utf8').trim().split(/\s+/).length < count)
    await sleep(20);
}

/**
 * A project whose test run starts a setsid daemon and a plain background process, then waits forever.
 * Its processes are told apart by a marker in their arguments: inside the sandbox's PID namespace the
 * pids they could report mean nothing out here.
 */
function hangingProject(marker: string): { repo: TempRepo; startFile: string } {
  const script = `setsid -f sh -c 'echo $$ >> .pids; exec sleep 300.${marker}'; sleep 301.${marker} & echo $! >> .pids; wait`;
  const repo = greetingProject(undefined, `toolchain:\n  test: ${JSON.stringify(script)}\n`);
  repos.push(repo);
  return { repo, startFile: path.join(repo.dir, '.pids') };
}

describe.skipIf(process.platform !== 'linux')(
  'no test process outlives the stdio server (Linux)',
  () => {
    for (const stop of ['SIGINT', 'SIGTERM', 'stdin closed'] as const) {
      it(`kills a running test tree, setsid daemon included, when stopped by ${stop}`, async () => {
        const marker = `${process.pid}${stop.length}`;
        const { repo, startFile } = hangingProject(marker);
        const server = startServer(repo.dir);
        await server.answer(0);
        server.send({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'run_independent_tests',
            arguments: { worktree: repo.dir, task_id: 'TASK-042' },
          },
        });
        await waitForStarts(startFile, 2);
        const sleepers = () => processesWith(marker).filter((line) => line.startsWith('sleep '));
        // The candidate run's two, plus two for each trusted run started beside it (the baseline).
        // Each shell writes its pid before it becomes `sleep`: wait for the exec too.
        while (sleepers().length < 2) await sleep(20);
        if (stop === 'stdin closed') server.child.stdin.end();
        else server.child.kill(stop);
        const code = await server.exited;
        expect(code).toBe({ SIGINT: 130, SIGTERM: 143, 'stdin closed': 0 }[stop]);
        await sleep(200); // the kernel reaps the namespace's processes just after its init exits
        expect(sleepers()).toEqual([]);
        expect(server.stderr()).toMatch(/killed \d+ running test run/);
      });
    }
  },
);

describe('bad frames get a JSON-RPC error and the session survives', () => {
  it('answers an oversized line (10 MB) with -32600 for its id, then still answers ping', async () => {
    const repo = greetingProject();
    repos.push(repo);
    const server = startServer(repo.dir);
    await server.answer(0);
    const huge = {
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'load_task', arguments: { worktree: 'x'.repeat(10 * 1024 * 1024) } },
      id: 7,
    };
    server.send(huge);
    const error = await server.answer(7);
    expect(error.error.code).toBe(-32600);
    expect(error.error.message).toMatch(/too large/);
    expect(JSON.stringify(error).length).toBeLessThan(1000);
    server.send({ jsonrpc: '2.0', id: 8, method: 'ping' });
    expect((await server.answer(8)).result).toEqual({});
    server.child.stdin.end();
    expect(await server.exited).toBe(0);
  });

  it('answers malformed JSON with -32700 and non-JSON-RPC with -32600, quoting only a short prefix', async () => {
    const repo = greetingProject();
    repos.push(repo);
    const server = startServer(repo.dir);
    await server.answer(0);
    server.send(`{"jsonrpc":"2.0","id":3,"method":"ping",${'y'.repeat(100_000)}`);
    const parse = await server.answer(3);
    expect(parse.error.code).toBe(-32700);
    expect(JSON.stringify(parse).length).toBeLessThan(600);
    server.send({ id: 4, hello: 'world' });
    expect((await server.answer(4)).error.code).toBe(-32600);
    server.send({ jsonrpc: '2.0', id: 5, method: 'ping' });
    expect((await server.answer(5)).result).toEqual({});
    server.child.kill('SIGTERM');
    await server.exited;
  });
});
