import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';
import { CLI as cli } from '../helpers/cli.js';

let stateDir: string;
let repo: TempRepo;
afterEach(() => {
  rmSync(path.dirname(stateDir), { recursive: true, force: true });
  repo?.remove();
});

const coachgate = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args, '--state-dir', stateDir], {
    encoding: 'utf8',
    input: '',
  });
const keyFile = () => path.join(stateDir, 'keys', 'ed25519.pem');
const garbage = () => writeFileSync(keyFile(), 'not a key at all\n');
const named = (text: string) => {
  expect(text).toContain(`The signing key ${keyFile()} is not a private key`);
  expect(text).toContain('coachgate key init');
  expect(text).not.toMatch(/\n\s+at /); // no stack trace
};

describe('a damaged signing key', () => {
  it('serve and gate name the key file and how to make a new one, without a stack trace', () => {
    stateDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-keys-')), 'state');
    mkdirSync(path.dirname(keyFile()), { recursive: true });
    garbage();
    const serve = coachgate('serve');
    expect(serve.status).toBe(1);
    named(serve.stderr);

    repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    const gate = coachgate('gate', '--task', 'TASK-001', '--worktree', repo.dir);
    expect(gate.status).not.toBe(0);
    named(gate.stderr);
  });

  it('a tool of a running server refuses to sign and names the file', async () => {
    stateDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-keys-')), 'state');
    repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    const client = new Client({ name: 'damaged-key-test', version: '0.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [cli, '--root', repo.dir, '--state-dir', stateDir],
        stderr: 'ignore',
      }),
    );
    try {
      const task = { worktree: repo.dir, task_id: 'TASK-001' };
      const report = { tests_passed: true, files_created: ['README.md'] };
      await callTool(client, 'record_player_report', { ...task, turn: 1, report });
      garbage();
      const verdict = { ...task, turn: 1, decision: 'feedback', rationale: 'not yet' };
      const refused = await callTool(client, 'record_verdict', verdict);
      expect(refused.isError).toBe(true);
      named(textOf(refused));
    } finally {
      await client.close();
    }
  });
});
