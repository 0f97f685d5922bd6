import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BLOCKED,
  CLI,
  dashboardRepository,
  HTML_TEST_NAME,
  HTML_TITLE,
} from '../helpers/dashboard-repo.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(new URL('../../docs/images/dashboard.png', import.meta.url));
const TURNS_SCREENSHOT = fileURLToPath(
  new URL('../../docs/images/dashboard-turns.png', import.meta.url),
);

/** The page polls every 2 s and the machine may be busy: give the page time. */
const POLL = { timeout: 30_000 };

let worktree: string;
let url: string;
let ui: ChildProcess;

/** Every file under a directory with its size and mtime: what "nothing was written" compares. */
function snapshot(directory: string): string[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      const info = statSync(file);
      return `${file} ${info.size} ${info.mtimeMs}`;
    })
    .sort();
}

function get(
  pathname: string,
  options: { method?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(pathname, url);
    const req = request(
      target,
      { method: options.method ?? 'GET', headers: options.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  worktree = await dashboardRepository();
  ui = spawn(process.execPath, [CLI, 'ui', '--root', worktree, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    ui.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    ui.once('exit', (code) => reject(new Error(`coachgate ui exited with ${code}`)));
  });
}, 400_000);

afterAll(() => {
  ui?.kill('SIGTERM');
});

describe('coachgate ui: the JSON endpoint over a recorded loop', () => {
  it('prints its loopback URL first and serves the server records of every task', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await get('api/dashboard');
    expect(response.status).toBe(200);
    const data = JSON.parse(response.body);
    const greet = data.tasks.find((task: any) => task.id === 'TASK-GREET-001');
    expect(greet.status).toBe('approved');
    expect(greet.turns.map((turn: any) => turn.turn)).toEqual([1, 2]);
    const [first, second] = greet.turns;
    expect(first.refused[0].reasons.join('\n')).toMatch(/latest test run \S+ has status "failed"/);
    expect(first.refused[0].signature.signed).toBe(true);
    expect(first.coach.decision).toBe('feedback');
    expect(first.failing.now).toEqual(['trims names before greeting']);
    expect(first.runs[0].signature.signed).toBe(true);
    expect(second.coach.decision).toBe('approve');
    expect(second.coach.run_id).toBe(second.runs[0].run_id);
    expect(second.failing.fixed).toEqual(['trims names before greeting']);

    const blocked = data.tasks.find((task: any) => task.id === BLOCKED);
    expect(blocked.title).toBe(HTML_TITLE);
    expect(blocked.status).toBe('blocked');
    expect([blocked.strikes, blocked.max_strikes]).toEqual([3, 3]);
    expect(blocked.turns.map((turn: any) => turn.failing)).toEqual([
      { now: expect.arrayContaining([HTML_TEST_NAME, 'shouts']), added: [], fixed: [] },
      { now: [HTML_TEST_NAME], added: [], fixed: ['shouts'] },
      { now: expect.arrayContaining(['whispers']), added: ['whispers'], fixed: [] },
    ]);
    // The mirror says approve; the server's signed copy (and so the page) says feedback.
    expect(blocked.turns[0].coach.decision).toBe('feedback');
    expect(blocked.mirror_tampering).toContainEqual({
      file: `.guardkit/autobuild/${BLOCKED}/verdicts.jsonl`,
      entry: 'line 1 (seq 1)',
      difference: 'field decision: server "feedback", mirror "approve"',
    });
    expect(data.tampered_tasks).toEqual([BLOCKED]);
    expect(data.graph.cycles).toEqual([
      {
        nodes: ['TASK-CYCLE-A', 'TASK-CYCLE-B'],
        path: ['TASK-CYCLE-A', 'TASK-CYCLE-B', 'TASK-CYCLE-A'],
      },
    ]);
    expect(data.graph.nodes.find((node: any) => node.id === BLOCKED).column).toBe(1);
  });

  it('serves a bounded run log only for runs the server stored', async () => {
    const data = JSON.parse((await get('api/dashboard')).body);
    const run = data.tasks.find((task: any) => task.id === BLOCKED).turns[0].runs[0];
    const log = await get(`api/log?task=${BLOCKED}&run=${encodeURIComponent(run.run_id)}`);
    expect(log.status).toBe(200);
    expect(JSON.parse(log.body).text).toContain('shouts');
    const planted = await get(`api/log?task=${BLOCKED}&run=..%2F..%2F..%2Fpackage`);
    expect(planted.status).toBe(404);
  });

  it('is read-only, loopback-checked and sends a strict CSP', async () => {
    const state = snapshot(process.env.COACHGATE_STATE_DIR!);
    const mirror = snapshot(path.join(worktree, '.guardkit'));
    const page = await get('');
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH'])
      expect((await get('api/dashboard', { method })).status).toBe(405);
    expect((await get('api/dashboard', { headers: { Host: 'evil.example:80' } })).status).toBe(403);
    expect(
      (await get('api/dashboard', { headers: { Origin: 'http://evil.example' } })).status,
    ).toBe(403);
    // Neither the state nor the (tampered) mirror changed: the page never repairs or writes.
    expect(snapshot(process.env.COACHGATE_STATE_DIR!)).toEqual(state);
    expect(snapshot(path.join(worktree, '.guardkit'))).toEqual(mirror);
  });
});

describe.skipIf(!existsSync(CHROMIUM))(
  `coachgate ui in headless Chromium (skipped when ${CHROMIUM} is missing)`,
  () => {
    it('shows the loop, the tampering and HTML test names as text, and updates live', async () => {
      const { chromium } = await import('playwright-core');
      const context = await chromium.launchPersistentContext(
        mkdtempSync(path.join(os.tmpdir(), 'coachgate-chromium-')),
        {
          executablePath: CHROMIUM,
          headless: true,
          args: [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            '--disable-quic',
            '--no-first-run',
            '--disable-background-networking',
            '--disable-component-update',
            '--disable-sync',
          ],
          viewport: { width: 1280, height: 900 },
        },
      );
      try {
        const page = await context.newPage();
        const problems: string[] = [];
        page.on('console', (message) => {
          if (message.type() === 'error') problems.push(message.text());
        });
        page.on('pageerror', (error) => problems.push(error.message));
        const offsite: string[] = [];
        page.on('request', (sent) => {
          if (!sent.url().startsWith(url)) offsite.push(sent.url());
        });
        await page.goto(url);
        const alert = page.locator('.alert[role=alert]');
        await expect.poll(() => alert.textContent(), POLL).toContain('Worktree mirror tampered');
        expect(await alert.textContent()).toContain(
          'line 1 (seq 1): field decision: server "feedback", mirror "approve"',
        );
        // The blocked task is selected first: its failing test named with HTML is text, not an image.
        const detail = page.locator(`[data-detail="${BLOCKED}"]`);
        await expect.poll(() => detail.count(), POLL).toBe(1);
        expect(await detail.locator('h2').textContent()).toContain(HTML_TITLE);
        expect(await detail.locator('.failing li', { hasText: HTML_TEST_NAME }).count()).toBe(3);
        expect(await page.locator('img').count()).toBe(0);
        expect(await page.locator('b').count()).toBe(0);
        expect(await page.title()).toBe('coachgate dashboard');
        expect(await detail.locator('.facts').textContent()).toMatch(/strikes3 \/ 3/);
        expect(await page.locator('.node.in-cycle').count()).toBe(2);
        expect(await page.locator('.chart .bar.failed').count()).toBeGreaterThanOrEqual(3);

        await page.locator('.task-card[data-task="TASK-GREET-001"]').click();
        const greet = page.locator('[data-detail="TASK-GREET-001"]');
        await expect.poll(() => greet.count(), POLL).toBe(1);
        const turns = greet.locator('.turn');
        expect(await turns.count()).toBe(2);
        expect(await turns.nth(0).locator('.refused').textContent()).toMatch(
          /Approval refused by the server.*has status "failed"/,
        );
        expect(await turns.nth(0).locator('.verdict').textContent()).toContain('Feedback');
        expect(await turns.nth(1).locator('.verdict').textContent()).toContain('Approved');
        expect(await greet.locator('.sig.bad-text').count()).toBe(0);
        mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
        await greet.screenshot({ path: TURNS_SCREENSHOT });
        await turns.nth(0).locator('details.run summary').click();
        await turns
          .nth(0)
          .getByRole('button', { name: /Show the log/ })
          .click();
        await expect
          .poll(() => turns.nth(0).locator('.log pre').textContent(), POLL)
          .toContain('trims names before greeting');

        await page.locator(`.task-card[data-task="${BLOCKED}"]`).click();
        await page.screenshot({ path: SCREENSHOT, fullPage: true });

        // Restoring the mirror clears the alert without a reload.
        const mirror = path.join(worktree, '.guardkit', 'autobuild', BLOCKED, 'verdicts.jsonl');
        const text = readFileSync(mirror, 'utf8');
        writeFileSync(mirror, text.replace('"decision":"approve"', '"decision":"feedback"'));
        await expect.poll(() => alert.count(), POLL).toBe(0);
        expect(problems).toEqual([]);
        expect(offsite).toEqual([]);
      } finally {
        await context.close();
      }
    }, 240_000);
  },
);
