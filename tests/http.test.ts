import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../src/server/http.js';
import { TokenTable } from '../src/server/http-tokens.js';
import type { TempRepo } from './helpers/git-repo.js';
import { callTool, dataOf, textOf } from './helpers/mcp.js';
import { greetingProject } from './helpers/node-project.js';
import { CLI as cli } from './helpers/cli.js';

const COACH_TOKEN = 'coach-token-0123456789abcdef';
const PLAYER_TOKEN = 'player-token-0123456789abcdef';
const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'curl', version: '0' },
  },
};

let secrets: string;
let tokensFile: string;
let repo: TempRepo;
let server: RunningHttpServer;
const clients: Client[] = [];

beforeAll(() => {
  secrets = mkdtempSync(path.join(os.tmpdir(), 'coachgate-tokens-'));
  tokensFile = path.join(secrets, 'tokens.yaml');
  writeFileSync(tokensFile, `${COACH_TOKEN}: coach\n${PLAYER_TOKEN}: player\n`);
  chmodSync(tokensFile, 0o600);
});
afterAll(() => rmSync(secrets, { recursive: true, force: true }));
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  await server?.close();
  repo?.remove();
});

async function start(idleTimeoutMs?: number, maxSessions?: number): Promise<void> {
  repo = greetingProject();
  const { table } = await TokenTable.load(tokensFile);
  const listen = {
    host: '127.0.0.1',
    port: 0,
    allowedHosts: [],
    allowedOrigins: [],
    idleTimeoutMs,
    maxSessions,
  };
  server = await startHttpServer({ roots: [repo.dir] }, listen, table);
}

async function clientWith(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'http-test', version: '0' });
  await client.connect(transport);
  clients.push(client);
  return client;
}

const post = (headers: Record<string, string>, body: unknown = INITIALIZE, url = server.url) =>
  fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(body),
  });

describe('coachgate serve --http (Streamable HTTP)', () => {
  it('a full Coach turn over HTTP with the SDK client ends in an approval', async () => {
    await start();
    const player = await clientWith(PLAYER_TOKEN);
    const coach = await clientWith(COACH_TOKEN);
    const task = { worktree: repo.dir, task_id: 'TASK-042' };
    const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
      dataOf(await callTool(client, name, { ...task, ...args }));
    await call(player, 'record_player_report', {
      turn: 1,
      report: { tests_passed: true, files_created: ['src/greet.js', 'test/greet.test.js'] },
    });
    expect((await call(coach, 'load_task')).acceptance_criteria).toHaveLength(2);
    await call(coach, 'read_task_work_results');
    await call(coach, 'verify_quality_gates');
    expect((await call(coach, 'run_independent_tests')).status).toBe('passed');
    expect((await call(coach, 'check_test_integrity')).findings).toEqual([]);
    const evidence = [
      { criterion: 'AC-001', test: 'greets by name' },
      { criterion: 'AC-002', test: 'rejects empty names' },
    ];
    expect((await call(coach, 'validate_requirements', { evidence })).all_criteria_met).toBe(true);
    expect(
      (
        await call(coach, 'record_verdict', {
          turn: 1,
          decision: 'approve',
          rationale: 'verified over HTTP',
          evidence,
        })
      ).status,
    ).toBe('approved');
    expect((await call(player, 'task_status')).status).toBe('approved');
  });

  it('a player token sees no coach tools and cannot call record_verdict', async () => {
    await start();
    const player = await clientWith(PLAYER_TOKEN);
    const names = (await player.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('record_player_report');
    expect(names).not.toContain('record_verdict');
    expect(names).not.toContain('check_test_integrity');
    const result = (await player.callTool({
      name: 'record_verdict',
      arguments: {
        worktree: repo.dir,
        task_id: 'TASK-042',
        turn: 1,
        decision: 'feedback',
        rationale: 'x',
      },
    })) as CallToolResult;
    expect([result.isError, textOf(result)]).toEqual([
      true,
      expect.stringMatching(/Tool record_verdict not found/),
    ]);
    const coach = await clientWith(COACH_TOKEN);
    expect((await coach.listTools()).tools.map((tool) => tool.name)).toContain('record_verdict');
  });

  it('no or unknown token: 401; bad Host or Origin: 403; a session belongs to its token', async () => {
    await start();
    const missing = await post({});
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect((await post({ Authorization: `Bearer ${COACH_TOKEN}x` })).status).toBe(401);
    expect((await post({ Authorization: `Bearer ${COACH_TOKEN.slice(0, -1)}` })).status).toBe(401);
    const port = new URL(server.url).port;
    // fetch() cannot set Host: a DNS-rebinding page's request arrives with the attacker's host name.
    const rebound = await new Promise<number>((resolve, reject) => {
      const body = JSON.stringify(INITIALIZE);
      const headers = {
        Host: `evil.example:${port}`,
        Authorization: `Bearer ${COACH_TOKEN}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      };
      request(server.url, { method: 'POST', headers }, (response) => {
        response.resume();
        resolve(response.statusCode!);
      })
        .on('error', reject)
        .end(body);
    });
    expect(rebound).toBe(403);
    expect(
      (await post({ Authorization: `Bearer ${COACH_TOKEN}`, Origin: 'https://evil.example' }))
        .status,
    ).toBe(403);

    const opened = await post({
      Authorization: `Bearer ${COACH_TOKEN}`,
      Origin: `http://localhost:${port}`,
    });
    expect(opened.status).toBe(200);
    const sessionId = opened.headers.get('mcp-session-id')!;
    expect(sessionId).toBeTruthy();
    const listTools = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const borrowed = await post(
      {
        Authorization: `Bearer ${PLAYER_TOKEN}`,
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-06-18',
      },
      listTools,
    );
    expect(borrowed.status).toBe(403);
    expect(
      (
        await post(
          { Authorization: `Bearer ${COACH_TOKEN}`, 'mcp-session-id': 'no-such-session' },
          listTools,
        )
      ).status,
    ).toBe(404);
    const huge = { ...listTools, params: { padding: 'x'.repeat(5 * 1024 * 1024) } };
    expect(
      (await post({ Authorization: `Bearer ${COACH_TOKEN}`, 'mcp-session-id': sessionId }, huge))
        .status,
    ).toBe(413);
  });

  it('closes sessions left idle, so vanished clients do not pile up', async () => {
    await start(200);
    const opened = await post({ Authorization: `Bearer ${COACH_TOKEN}` });
    const sessionId = opened.headers.get('mcp-session-id')!;
    const ping = { jsonrpc: '2.0', id: 2, method: 'ping' };
    const headers = {
      Authorization: `Bearer ${COACH_TOKEN}`,
      'mcp-session-id': sessionId,
      'mcp-protocol-version': '2025-06-18',
    };
    expect((await post(headers, ping)).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect((await post(headers, ping)).status).toBe(404);
  });

  it('caps the sessions one token holds: one more is a 503 with a JSON-RPC error saying why', async () => {
    await start(60_000, 2);
    const first = await clientWith(COACH_TOKEN);
    await clientWith(COACH_TOKEN);
    // A burst of initializations cannot slip past the cap either.
    const burst = await Promise.all(
      Array.from({ length: 10 }, () => post({ Authorization: `Bearer ${COACH_TOKEN}` })),
    );
    expect(burst.map((response) => response.status)).toEqual(Array(10).fill(503));
    expect(burst[0]!.headers.get('retry-after')).toBe('60');
    const body = (await burst[0]!.json()) as { jsonrpc: string; error: { message: string } };
    expect(body.jsonrpc).toBe('2.0');
    expect(body.error.message).toMatch(
      /this token already holds 2 open sessions \(--max-sessions\).*unused for 60 s are closed \(--idle-timeout\)/,
    );
    await expect(clientWith(COACH_TOKEN)).rejects.toThrow(/503|Too many sessions/);
    // Another token is not starved, and the server still answers the sessions it holds.
    const player = await clientWith(PLAYER_TOKEN);
    expect((await player.listTools()).tools.length).toBeGreaterThan(0);
    expect((await first.listTools()).tools.length).toBeGreaterThan(0);
    // Ending a session frees its slot.
    await (first.transport as StreamableHTTPClientTransport).terminateSession();
    await first.close();
    const again = await clientWith(COACH_TOKEN);
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('a burst of initializations on an empty server opens exactly the cap', async () => {
    await start(60_000, 3);
    const burst = await Promise.all(
      Array.from({ length: 12 }, () => post({ Authorization: `Bearer ${PLAYER_TOKEN}` })),
    );
    const statuses = burst.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(3).fill(200), ...Array(9).fill(503)]);
  });

  it('the CLI serves over HTTP, never prints a token, and refuses --http without --tokens', async () => {
    repo = greetingProject();
    const child = spawn(
      process.execPath,
      [cli, 'serve', '--http', '127.0.0.1:0', '--tokens', tokensFile, '--root', repo.dir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
        const match = /at (http:\S+)/.exec(stderr);
        if (match) resolve(match[1]!);
      });
      child.once('exit', () => reject(new Error(`server exited: ${stderr}`)));
    });
    const transport = new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${PLAYER_TOKEN}` } },
    });
    const client = new Client({ name: 'http-cli-test', version: '0' });
    await client.connect(transport);
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain(
      'record_verdict',
    );
    await client.close();
    expect((await post({}, INITIALIZE, url)).status).toBe(401);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    expect(stderr + stdout).not.toContain(PLAYER_TOKEN.slice(0, 12));
    expect(stderr + stdout).not.toContain(COACH_TOKEN.slice(0, 12));
    expect(stdout).toBe('');

    const refused = spawn(process.execPath, [cli, 'serve', '--http', '0', '--root', repo.dir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let refusal = '';
    refused.stderr.on('data', (chunk) => (refusal += chunk));
    expect(await new Promise((resolve) => refused.once('exit', resolve))).toBe(2);
    expect(refusal).toMatch(/--http needs --tokens FILE/);
  });
});

describe('--tokens file', () => {
  const write = (name: string, text: string, mode = 0o600) => {
    const file = path.join(secrets, name);
    writeFileSync(file, text);
    chmodSync(file, mode);
    return file;
  };

  it('matches whole tokens only, and names bad entries by position without printing them', async () => {
    const { table, warnings } = await TokenTable.load(
      write('ok.json', JSON.stringify({ [COACH_TOKEN]: 'coach', [PLAYER_TOKEN]: 'player' })),
    );
    expect(warnings).toEqual([]);
    expect(table.match(`Bearer ${PLAYER_TOKEN}`)).toMatchObject({ role: 'player', index: 2 });
    expect(table.match(`bearer ${COACH_TOKEN}`)).toMatchObject({ role: 'coach', index: 1 });
    for (const header of [
      undefined,
      '',
      COACH_TOKEN,
      `Bearer ${COACH_TOKEN.slice(0, 8)}`,
      `Bearer ${COACH_TOKEN} extra`,
      `Basic ${COACH_TOKEN}`,
    ]) {
      expect(table.match(header), String(header)).toBeUndefined();
    }
    const short = TokenTable.load(
      write('short.yaml', `${COACH_TOKEN}: coach\nshort-secret: player\n`),
    );
    await expect(short).rejects.toThrow(/token 2 is shorter than 16 characters/);
    await expect(
      TokenTable.load(write('short.yaml', 'short-secret: player\n')),
    ).rejects.not.toThrow(/short-secret/);
    await expect(TokenTable.load(write('role.yaml', `${COACH_TOKEN}: judge\n`))).rejects.toThrow(
      /must map each token to one of player, coach, all/,
    );
    const open = await TokenTable.load(write('open.yaml', `${COACH_TOKEN}: coach\n`, 0o644));
    expect(open.warnings).toEqual([expect.stringMatching(/readable by other users; chmod 600/)]);
  });
});
