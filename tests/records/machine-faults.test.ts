import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, textOf } from '../helpers/mcp.js';
import type { TempRepo } from '../helpers/git-repo.js';
import { greetingProject } from '../helpers/node-project.js';
import { CLI as cli } from '../helpers/cli.js';

let repo: TempRepo;
let stateDir: string;
afterEach(() => {
  repo?.remove();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** Mount namespaces (unshare -m, as root, as in CI) make a read-only or full disk for real. */
const canUnshare = spawnSync('unshare', ['-m', 'true']).status === 0;

/**
 * The stdio server in its own mount namespace, after `setup` (a shell snippet that sees $S, the state
 * directory) has remounted the state directory: the test process keeps the normal view.
 */
async function serverInNamespace(setup: string): Promise<Client> {
  const serve = `${setup} && exec "${process.execPath}" "${cli}" --root "$R" --state-dir "$S"`;
  const transport = new StdioClientTransport({
    command: 'unshare',
    args: ['-m', 'sh', '-c', serve],
    env: { ...(process.env as Record<string, string>), S: stateDir, R: repo.dir },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'faults', version: '0' });
  await client.connect(transport);
  return client;
}

const REPORT = {
  worktree: '',
  task_id: 'TASK-042',
  turn: 1,
  report: { tests_passed: true, files_created: ['src/greet.js'] },
};

describe('machine faults answer as errors that say what to do', () => {
  it.skipIf(!canUnshare)('a read-only state directory (skipped without unshare -m)', async () => {
    repo = greetingProject();
    stateDir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-ro-state-'));
    expect(spawnSync(process.execPath, [cli, 'key', 'init', '--state-dir', stateDir]).status).toBe(
      0,
    );
    const client = await serverInNamespace(
      'mount --bind "$S" "$S" && mount -o remount,ro,bind "$S" "$S"',
    );
    const result = await callTool(client, 'record_player_report', {
      ...REPORT,
      worktree: repo.dir,
    });
    await client.close();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      new RegExp(
        `state directory ${stateDir} is on a read-only file system: coachgate could not write it \\(EROFS\\)`,
      ),
    );
    expect(textOf(result)).toContain('--state-dir DIR');
    expect(textOf(result)).not.toMatch(/could not complete/);
  });

  it.skipIf(!canUnshare)(
    'a full disk under the state directory (skipped without unshare -m)',
    async () => {
      repo = greetingProject();
      stateDir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-full-state-'));
      const client = await serverInNamespace(
        [
          'mount -t tmpfs -o size=256k,mode=0700 tmpfs "$S"',
          `"${process.execPath}" "${cli}" key init --state-dir "$S" >/dev/null`,
          '(head -c 1048576 /dev/zero > "$S/filler" 2>/dev/null || true)',
        ].join(' && '),
      );
      const result = await callTool(client, 'record_player_report', {
        ...REPORT,
        worktree: repo.dir,
      });
      await client.close();
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(
        new RegExp(`The disk is full: coachgate could not write ${stateDir}/.* \\(ENOSPC\\)`),
      );
      expect(textOf(result)).toMatch(`Free space on the disk holding ${stateDir}, then retry`);
    },
  );

  it('a worktree deleted while the server runs its tests', async () => {
    repo = greetingProject();
    repo.write(
      'package.json',
      JSON.stringify({
        type: 'module',
        scripts: { test: 'touch started && sleep 4 && node --test' },
      }),
    );
    const { client, close } = await connect({ roots: [repo.dir] });
    const call = callTool(client, 'run_independent_tests', {
      worktree: repo.dir,
      task_id: 'TASK-042',
    });
    while (!existsSync(path.join(repo.dir, 'started')))
      await new Promise((resolve) => setTimeout(resolve, 50));
    rmSync(repo.dir, { recursive: true, force: true });
    const result = await call;
    await close();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain(`The worktree ${repo.dir} no longer exists`);
    expect(textOf(result)).toContain('coachgate worktree start --task TASK-042');
    expect(existsSync(repo.dir)).toBe(false);
  });
});
