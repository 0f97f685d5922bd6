import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, SAMPLE_TASK, type TempRepo } from './helpers/git-repo.js';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let repo: TempRepo;

beforeAll(() => {
  repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
});
afterAll(() => repo.remove());

describe('the built binary (dist/cli.js)', () => {
  it('serves every tool over stdio and keeps stdout for MCP frames only', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [cli, '--root', repo.dir], stderr: 'pipe' });
    const client = new Client({ name: 'stdio-test', version: '0' });
    await client.connect(transport);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['load_task', 'read_task_work_results', 'verify_quality_gates', 'record_player_report']));
    for (const tool of tools) {
      expect(tool.outputSchema, tool.name).toBeDefined();
      expect(Object.keys(tool.annotations ?? {}), tool.name).toEqual(expect.arrayContaining(['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']));
    }
    const result = await client.callTool({ name: 'load_task', arguments: { worktree: repo.dir, task_id: 'TASK-001' } });
    expect(result.structuredContent).toMatchObject({ title: 'Greeting helper' });
    // A non-JSON line on stdout would have broken the client's parser before this point.
    await client.close();
  });

  it('prints help and version, and exits 2 on an unknown flag', () => {
    expect(execFileSync(process.execPath, [cli, '--help'], { encoding: 'utf8' })).toMatch(/Usage:\n {2}coachgate \[serve\] \[--root DIR \.\.\.\]/);
    expect(execFileSync(process.execPath, [cli, '--version'], { encoding: 'utf8' }).trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const bad = spawnSync(process.execPath, [cli, '--frobnicate'], { encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toMatch(/Unknown option '--frobnicate'/);
    const missingRoot = spawnSync(process.execPath, [cli, '--root', '/no/such/dir'], { encoding: 'utf8' });
    expect(missingRoot.status).toBe(2);
    expect(missingRoot.stderr).toMatch(/--root \/no\/such\/dir does not exist/);
  });
});
