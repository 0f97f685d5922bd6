import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';
import { greetingProject } from '../helpers/node-project.js';

let repo: TempRepo;
let outside: TempRepo | undefined;
afterEach(() => {
  repo?.remove();
  outside?.remove();
});

const repoTools = ['load_task', 'read_task_work_results', 'verify_quality_gates'];

describe('roots and path safety', () => {
  it('refuses a worktree outside every root, for every repository tool', async () => {
    repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    outside = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    const { client, close } = await connect({ roots: [repo.dir] });
    for (const name of repoTools) {
      const result = await callTool(client, name, { worktree: outside.dir, task_id: 'TASK-001' });
      expect(result.isError, name).toBe(true);
      expect(textOf(result), name).toMatch(/outside the allowed roots/);
    }
    const traversal = await callTool(client, 'load_task', {
      worktree: `${repo.dir}/../${path.basename(outside.dir)}`,
      task_id: 'TASK-001',
    });
    expect(textOf(traversal)).toMatch(/outside the allowed roots/);
    await close();
  });

  it('refuses a symlink inside a root that leads outside it', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'coachgate-root-'));
    outside = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    symlinkSync(outside.dir, path.join(root, 'escape'));
    const { client, close } = await connect({ roots: [root] });
    const result = await callTool(client, 'load_task', { worktree: 'escape', task_id: 'TASK-001' });
    await close();
    rmSync(root, { recursive: true, force: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/symlink that leads outside the allowed roots/);
  });

  it.each([
    ['runs/', '.guardkit/autobuild/TASK-042/runs'],
    ['the task directory', '.guardkit/autobuild/TASK-042'],
  ])(
    'run_independent_tests refuses a symlinked %s before the run: no log or record lands outside',
    async (_, linked) => {
      repo = greetingProject();
      const target = mkdtempSync(path.join(os.tmpdir(), 'coachgate-outside-'));
      // The trusted runs' snapshots are made in the temp directory: this call's own shows none left.
      const temporary = mkdtempSync(path.join(os.tmpdir(), 'coachgate-tmpdir-'));
      const tmpdir = process.env.TMPDIR;
      const restoreTmpdir = () => {
        if (tmpdir === undefined) delete process.env.TMPDIR;
        else process.env.TMPDIR = tmpdir;
      };
      try {
        mkdirSync(path.dirname(path.join(repo.dir, linked)), { recursive: true });
        symlinkSync(target, path.join(repo.dir, linked));
        const { client, close } = await connect({ roots: [repo.dir] });
        process.env.TMPDIR = temporary;
        const result = await callTool(client, 'run_independent_tests', {
          worktree: repo.dir,
          task_id: 'TASK-042',
        });
        restoreTmpdir();
        await close();
        // Refused before the trusted runs were started: no snapshot of them waits for a release.
        expect(readdirSync(temporary)).toEqual([]);
        expect(result.isError).toBe(true);
        expect(textOf(result)).toMatch(
          new RegExp(
            `Refusing to write .*\\.log: .*${linked.replace(/[/.]/g, '\\$&')} is a symbolic link`,
          ),
        );
        expect(textOf(result)).toMatch(/Remove the link/);
        expect(readdirSync(target, { recursive: true })).toEqual([]);
      } finally {
        restoreTmpdir();
        rmSync(target, { recursive: true, force: true });
        rmSync(temporary, { recursive: true, force: true });
      }
    },
  );

  it('refuses task ids that carry path syntax', async () => {
    repo = makeRepo({ 'README.md': 'x' });
    const { client, close } = await connect({ roots: [repo.dir] });
    for (const taskId of ['../etc', 'a/b', '.hidden', '', 'x'.repeat(65)]) {
      const result = await callTool(client, 'read_task_work_results', {
        worktree: repo.dir,
        task_id: taskId,
      });
      expect(result.isError, taskId).toBe(true);
      expect(textOf(result), taskId).toMatch(/task_id/);
    }
    await close();
  });

  it("uses the client's MCP roots when no --root is given", async () => {
    repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    outside = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
    const { ListRootsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const { createServer } = await import('../../src/server/create-server.js');
    const server = createServer({ cwd: outside.dir });
    const client = new Client(
      { name: 'roots-client', version: '0' },
      { capabilities: { roots: { listChanged: true } } },
    );
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: `file://${repo.dir}`, name: 'repo' }],
    }));
    const [a, b] = InMemoryTransport.createLinkedPair();
    await Promise.all([server.connect(b), client.connect(a)]);
    const inside = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-001' });
    const cwdRepo = await callTool(client, 'load_task', {
      worktree: outside.dir,
      task_id: 'TASK-001',
    });
    await client.close();
    expect(inside.isError).toBeFalsy();
    expect(textOf(cwdRepo)).toMatch(/outside the allowed roots/);
  });

  it('refuses a directory that is not a git repository', async () => {
    const plain = mkdtempSync(path.join(os.tmpdir(), 'coachgate-plain-'));
    const { client, close } = await connect({ roots: [plain] });
    const result = await callTool(client, 'load_task', { worktree: plain, task_id: 'TASK-001' });
    await close();
    rmSync(plain, { recursive: true, force: true });
    expect(textOf(result)).toMatch(/is not a git repository/);
  });

  it('refuses a repository with no commit yet, saying what to commit', async () => {
    const fresh = mkdtempSync(path.join(os.tmpdir(), 'coachgate-fresh-'));
    execFileSync('git', ['init', '-q'], { cwd: fresh });
    const { client, close } = await connect({ roots: [fresh] });
    const result = await callTool(client, 'load_task', { worktree: fresh, task_id: 'TASK-001' });
    await close();
    rmSync(fresh, { recursive: true, force: true });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/has no commits yet\. Commit the task files/);
  });
});
