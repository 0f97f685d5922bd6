import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer, type RunningHttpServer } from '../../src/server/http.js';
import { TokenTable } from '../../src/server/http-tokens.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

const COACH = 'c'.repeat(32);
const PLAYER = 'p'.repeat(32);

let repo: TempRepo;
let server: RunningHttpServer;
let base: string;

beforeAll(async () => {
  repo = makeRepo({
    '.guardkit/tasks/backlog/TASK-001.md':
      '---\nid: TASK-001\ntitle: One\n---\n## Acceptance Criteria\n- [ ] AC-001: one\n',
  });
  repo.commit('base');
  const tokensFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-tokens-')), 't.yaml');
  writeFileSync(tokensFile, `${COACH}: coach\n${PLAYER}: player\n`);
  chmodSync(tokensFile, 0o600);
  const { table } = await TokenTable.load(tokensFile);
  server = await startHttpServer(
    { roots: [repo.dir] },
    { host: '127.0.0.1', port: 0, allowedHosts: [], allowedOrigins: [] },
    table,
  );
  base = server.url.replace(/\/mcp$/, '');
});

afterAll(async () => {
  await server?.close();
  repo?.remove();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

describe('serve --http mounts the dashboard at /ui/', () => {
  it('serves the page to anyone on an allowed Host, with its CSP', async () => {
    const redirect = await fetch(`${base}/ui`, { redirect: 'manual' });
    expect([redirect.status, redirect.headers.get('location')]).toEqual([308, '/ui/']);
    const page = await fetch(`${base}/ui/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<script src="app.js" defer></script>');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('answers data only to a coach token, and only to GET and HEAD', async () => {
    expect((await fetch(`${base}/ui/api/dashboard`)).status).toBe(401);
    expect((await fetch(`${base}/ui/api/dashboard`, { headers: bearer(PLAYER) })).status).toBe(401);
    const answer = await fetch(`${base}/ui/api/dashboard`, { headers: bearer(COACH) });
    expect(answer.status).toBe(200);
    const data = (await answer.json()) as any;
    expect(data.graph.nodes).toEqual([
      { id: 'TASK-001', column: 0, row: 0, status: 'not started', in_cycle: false },
    ]);
    const post = await fetch(`${base}/ui/api/dashboard`, {
      method: 'POST',
      headers: bearer(COACH),
    });
    expect(post.status).toBe(405);
    // MCP is where it was.
    expect((await fetch(`${base}/other`)).status).toBe(404);
  });
});
