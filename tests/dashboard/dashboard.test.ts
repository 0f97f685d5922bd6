import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopTreeRuns } from '../../src/evaluation/early-runs.js';
import { BLOCKED, CLI, HTML_TEST_NAME, HTML_TITLE } from '../helpers/dashboard-repo.js';
import { runGate } from '../helpers/gate-cli.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { callTool, connect, dataOf } from '../helpers/mcp.js';
import { approveGreeting, GOOD_GREET, GREET_TESTS } from '../helpers/node-project.js';
import {
  IN_WORKTREE,
  IN_WORKTREE_PATH,
  tamperWithMirror,
  worktreeFlowRepository,
} from './worktree-flow.js';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(new URL('../../docs/images/dashboard.png', import.meta.url));
const TURNS_SCREENSHOT = fileURLToPath(
  new URL('../../docs/images/dashboard-turns.png', import.meta.url),
);
const WORKTREES_SCREENSHOT = fileURLToPath(
  new URL('../../docs/images/dashboard-worktrees.png', import.meta.url),
);
const MERGED_SCREENSHOT = fileURLToPath(
  new URL('../../docs/images/dashboard-merged.png', import.meta.url),
);

/** The page polls every 2 s and the machine may be busy: give the page time. */
const POLL = { timeout: 30_000 };

let worktree: string;
let url: string;
const started: ChildProcess[] = [];

/**
 * The screenshots in docs/images/ are refreshed on request only (`npm run screenshots`), so that a test
 * run leaves the working tree as it found it.
 */
const SCREENSHOTS = process.env.COACHGATE_SCREENSHOTS === '1';

async function screenshot(
  target: { screenshot(options: { path: string; fullPage?: boolean }): Promise<unknown> },
  file: string,
  fullPage = true,
): Promise<void> {
  if (!SCREENSHOTS) return;
  mkdirSync(path.dirname(file), { recursive: true });
  await target.screenshot({ path: file, ...(fullPage ? { fullPage } : {}) });
}

/** `coachgate ui --port 0` on a repository; resolves to the URL it prints first. */
async function startUi(
  options: string[] = [],
  root = worktree,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [CLI, 'ui', '--root', root, '--port', '0', ...options], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(child);
  const printed = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    child.once('exit', (code) => reject(new Error(`coachgate ui exited with ${code}`)));
  });
  return { child, url: printed };
}

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

/**
 * The directory once nothing in it moved for half a second (at most 10 s): the recorded loop's
 * trusted runs may still be writing their logs in the background, which is not the page's doing.
 */
async function settledSnapshot(directory: string): Promise<string[]> {
  let before = snapshot(directory);
  for (let wait = 0; wait < 20; wait += 1) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = snapshot(directory);
    if (now.join('\n') === before.join('\n')) return now;
    before = now;
  }
  return before;
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

async function dashboardJson(): Promise<any> {
  return JSON.parse((await get('api/dashboard')).body);
}

beforeAll(async () => {
  worktree = await worktreeFlowRepository();
  ({ url } = await startUi());
}, 400_000);

afterAll(() => {
  for (const child of started) child.kill('SIGTERM');
});

describe('coachgate ui: the JSON endpoint over a recorded loop', () => {
  it('prints its loopback URL first and serves the server records of every task', async () => {
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const response = await get('api/dashboard');
    expect(response.status).toBe(200);
    const data = JSON.parse(response.body);
    expect(data.state_directory).toBe(process.env.COACHGATE_STATE_DIR);
    expect(data.notice).toBeNull();
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
    // Nothing was edited: no task of any worktree is tampered.
    expect(data.tampered_tasks).toEqual([]);
    expect(data.graph.cycles).toEqual([
      {
        nodes: ['TASK-CYCLE-A', 'TASK-CYCLE-B'],
        path: ['TASK-CYCLE-A', 'TASK-CYCLE-B', 'TASK-CYCLE-A'],
      },
    ]);
    expect(data.graph.nodes.find((node: any) => node.id === BLOCKED).column).toBe(1);
  });

  it('opened on the main checkout, shows the task run in its own worktree with its live state', async () => {
    const data = await dashboardJson();
    expect(data.worktrees.map((item: any) => [item.label, item.this_checkout])).toEqual([
      ['this checkout', true],
      [IN_WORKTREE_PATH, false],
    ]);
    const task = data.tasks.find((item: any) => item.id === IN_WORKTREE);
    expect(task).toMatchObject({
      signed: true,
      status: 'in_progress',
      worktree: { label: IN_WORKTREE_PATH, branch: `autobuild/${IN_WORKTREE}` },
      mirror_tampering: [],
      latest_run: { status: 'passed', fresh: true },
      base_moved: null,
    });
    expect(task.turns.map((turn: any) => turn.coach?.decision ?? null)).toEqual(['feedback', null]);
    const greet = data.tasks.find((item: any) => item.id === 'TASK-GREET-001');
    expect(greet.worktree.label).toBe('this checkout');
  });

  it('reports tampering only while a mirror record really differs from the signed copy', async () => {
    const restore = tamperWithMirror(worktree, BLOCKED);
    try {
      await expect
        .poll(async () => (await dashboardJson()).tampered_tasks, POLL)
        .toEqual([BLOCKED]);
      const blocked = (await dashboardJson()).tasks.find((task: any) => task.id === BLOCKED);
      // The mirror says approve; the server's signed copy (and so the page) says feedback.
      expect(blocked.turns[0].coach.decision).toBe('feedback');
      expect(blocked.mirror_tampering).toEqual([
        {
          file: `.guardkit/autobuild/${BLOCKED}/verdicts.jsonl`,
          entry: 'line 1 (seq 1)',
          difference: 'field decision: server "feedback", mirror "approve"',
        },
      ]);
    } finally {
      restore();
    }
    await expect.poll(async () => (await dashboardJson()).tampered_tasks, POLL).toEqual([]);
  });

  it('serves a bounded run log only for runs the server stored', async () => {
    const data = JSON.parse((await get('api/dashboard')).body);
    const run = data.tasks.find((task: any) => task.id === BLOCKED).turns[0].runs[0];
    const log = await get(`api/log?task=${BLOCKED}&run=${encodeURIComponent(run.run_id)}`);
    expect(log.status).toBe(200);
    expect(JSON.parse(log.body).text).toContain('shouts');
    const planted = await get(`api/log?task=${BLOCKED}&run=..%2F..%2F..%2Fpackage`);
    expect(planted.status).toBe(404);
    // A worktree task's logs are in its worktree, where its runs ran.
    const inWorktree = data.tasks.find((task: any) => task.id === IN_WORKTREE).turns[0].runs[0];
    const worktreeLog = await get(
      `api/log?task=${IN_WORKTREE}&run=${encodeURIComponent(inWorktree.run_id)}`,
    );
    expect(worktreeLog.status).toBe(200);
    expect(JSON.parse(worktreeLog.body).text).toContain('says goodbye by name');
  });

  it('is read-only, loopback-checked and sends a strict CSP', async () => {
    const state = await settledSnapshot(process.env.COACHGATE_STATE_DIR!);
    const mirror = await settledSnapshot(path.join(worktree, '.guardkit'));
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
    // Neither the state nor any mirror changed: the page never repairs or writes.
    expect(snapshot(process.env.COACHGATE_STATE_DIR!)).toEqual(state);
    expect(snapshot(path.join(worktree, '.guardkit'))).toEqual(mirror);
  });
});

/** Headless Debian Chromium with a fresh profile, no network of its own. */
async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launchPersistentContext(
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
}

type Context = Awaited<ReturnType<typeof launchChromium>>;

type Page = Awaited<ReturnType<typeof watchedPage>>['page'];

/** The task ids of the Tasks card, and of the dependency graph: the two must agree. */
async function cardIds(page: Page): Promise<string[]> {
  const ids = await page
    .locator('.task-card')
    .evaluateAll((cards) => cards.map((card) => card.getAttribute('data-task')));
  return ids.sort();
}

async function nodeIds(page: Page): Promise<string[]> {
  return (await page.locator('.node .node-id').allTextContents()).sort();
}

/** A page that records console errors, page errors and requests to any other origin. */
async function watchedPage(context: Context, origin: string) {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('request', (sent) => {
    if (!sent.url().startsWith(origin)) problems.push(`request off the origin: ${sent.url()}`);
  });
  return { page, problems };
}

describe.skipIf(!existsSync(CHROMIUM))(
  `coachgate ui in headless Chromium (skipped when ${CHROMIUM} is missing)`,
  () => {
    let context: Context;
    beforeAll(async () => {
      context = await launchChromium();
    }, 240_000);
    afterAll(async () => {
      await context?.close();
    });

    it('shows a healthy worktree-flow repository without stray text or a banner', async () => {
      const { page, problems } = await watchedPage(context, url);
      await page.goto(url);
      const board = page.locator('.board');
      await expect.poll(() => board.count(), POLL).toBe(1);
      // Absent sections leave nothing behind: no "null", no text directly in <main> (3: a text node).
      const main = page.locator('main');
      expect(await main.innerText()).not.toMatch(/\bnull\b|\bundefined\b|\[object Object\]|NaN/);
      const looseText = (node: { childNodes: Iterable<{ nodeType: number }> }) =>
        [...node.childNodes].filter((child) => child.nodeType === 3).length;
      expect(await main.evaluate(looseText)).toBe(0);
      expect(await page.locator('.alert').count()).toBe(0);
      expect(await page.locator('.notice').count()).toBe(0);
      expect(await page.locator('#where').textContent()).toContain(
        `state ${process.env.COACHGATE_STATE_DIR}`,
      );

      // The task run in .guardkit/worktrees/… is listed, with where it runs and its live state.
      expect(await board.locator('.worktrees').textContent()).toContain(
        `${IN_WORKTREE_PATH} (autobuild/${IN_WORKTREE})`,
      );
      const card = page.locator(`.task-card[data-task="${IN_WORKTREE}"]`);
      expect(await card.locator('.task-where').textContent()).toBe(`in ${IN_WORKTREE_PATH}`);
      expect(await card.locator('.chip.bad').count()).toBe(0);
      expect(
        await page.locator('.task-card[data-task="TASK-GREET-001"] .task-where').textContent(),
      ).toBe('in this checkout');
      await card.click();
      const detail = page.locator(`[data-detail="${IN_WORKTREE}"]`);
      await expect.poll(() => detail.count(), POLL).toBe(1);
      const facts = await detail.locator('.facts').textContent();
      expect(facts).toContain(`worktree${IN_WORKTREE_PATH} (autobuild/${IN_WORKTREE})`);
      expect(facts).toMatch(/latest runpassed \(1 passed, 0 failed, 0 skipped\)/);
      expect(facts).not.toMatch(/stale|base moved/);
      expect(await detail.locator('.turn').count()).toBe(2);
      await screenshot(page, WORKTREES_SCREENSHOT);
      expect(problems).toEqual([]);
    }, 240_000);

    it('shows the loop and HTML test names as text; the banner only while a mirror record differs', async () => {
      const { page, problems } = await watchedPage(context, url);
      await page.goto(url);
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
      // The Tasks card lists every task of the graph, those with task files only as not started.
      expect(await cardIds(page)).toEqual(await nodeIds(page));
      expect(
        await page.locator('.task-card[data-task="TASK-CYCLE-A"] .task-title').textContent(),
      ).toBe('no records yet');
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
      // The approval's coach turn carries a feedback text; an approval sends nothing back, so no
      // "Feedback for the Player" disclosure. A passed run has no failure class to show.
      const greetData = (await dashboardJson()).tasks.find((t: any) => t.id === 'TASK-GREET-001');
      expect(greetData.turns[1].coach.feedback).not.toBe('');
      expect(await turns.nth(1).locator('details.feedback').count()).toBe(0);
      expect(await turns.nth(0).locator('details.feedback').count()).toBe(1);
      expect(greetData.turns[1].runs[0].failure_class).toBe('none');
      expect(await turns.nth(1).locator('details.run summary').textContent()).not.toMatch(
        /\bnone\b/,
      );
      // The trusted run's list of tests passing on the base code holds the base's tests too.
      const trusted = await turns.nth(1).locator('.trusted').textContent();
      expect(trusted).toContain("tests in the Player's files that pass on the base code:");
      expect(trusted).toContain('other tests that pass on the base code');
      expect(trusted).not.toContain('new tests');
      expect(await greet.locator('.sig.bad-text').count()).toBe(0);
      await screenshot(greet, TURNS_SCREENSHOT, false);
      await turns.nth(0).locator('details.run summary').click();
      // The command as typed, not the reporters coachgate added with their temporary paths.
      const ran = await turns.nth(0).locator('details.run').textContent();
      expect(ran).toContain(' · node --test');
      expect(ran).not.toMatch(/--test-reporter|coachgate-report-/);
      await turns
        .nth(0)
        .getByRole('button', { name: /Show the log/ })
        .click();
      await expect
        .poll(() => turns.nth(0).locator('.log pre').textContent(), POLL)
        .toContain('trims names before greeting');

      // A real edit of a mirror record raises the banner; restoring it clears it without a reload.
      const alert = page.locator('.alert[role=alert]');
      expect(await alert.count()).toBe(0);
      const restore = tamperWithMirror(worktree, BLOCKED);
      try {
        await expect.poll(() => alert.textContent(), POLL).toContain('Worktree mirror tampered');
        expect(await alert.textContent()).toContain(
          'line 1 (seq 1): field decision: server "feedback", mirror "approve"',
        );
        await page.locator(`.task-card[data-task="${BLOCKED}"]`).click();
        expect(await page.locator('.task-card .chip.bad', { hasText: 'tampered' }).count()).toBe(1);
        await screenshot(page, SCREENSHOT);
      } finally {
        restore();
      }
      await expect.poll(() => alert.count(), POLL).toBe(0);
      expect(problems).toEqual([]);
    }, 240_000);

    it('under another state directory, says it holds no signed records rather than "tampered"', async () => {
      const other = mkdtempSync(path.join(os.tmpdir(), 'coachgate-other-state-'));
      const elsewhere = await startUi(['--state-dir', other]);
      const { page, problems } = await watchedPage(context, elsewhere.url);
      await page.goto(elsewhere.url);
      const notice = page.locator('.notice[role=status]');
      await expect
        .poll(() => notice.textContent(), POLL)
        .toContain(`No signed records for this repository in ${other}`);
      expect(await page.locator('#where').textContent()).toContain(`state ${other}`);
      expect(await page.locator('.alert').count()).toBe(0);
      expect(await page.locator('.chip', { hasText: 'tampered' }).count()).toBe(0);
      // The tasks found in the mirrors are listed as not signed.
      expect(await page.locator(`.task-card[data-task="${IN_WORKTREE}"] .chip`).textContent()).toBe(
        'not signed',
      );
      expect(await page.locator('main').innerText()).not.toMatch(/\bnull\b|\bundefined\b/);
      elsewhere.child.kill('SIGTERM');
      expect(problems).toEqual([]);
    }, 240_000);
  },
);

/** A test that holds its run open until the file `go` appears in the worktree (at most 60 s). */
const HELD_TEST = [
  "import test from 'node:test';",
  "import { existsSync } from 'node:fs';",
  "test('waits for the go-ahead', async () => {",
  '  const until = Date.now() + 60_000;',
  "  while (!existsSync('go') && Date.now() < until) await new Promise((r) => setTimeout(r, 100));",
  '});',
  '',
].join('\n');

describe.skipIf(!existsSync(CHROMIUM))(
  `coachgate ui on a newcomer's repository in headless Chromium (skipped when ${CHROMIUM} is missing)`,
  () => {
    let context: Context;
    let repo: TempRepo | undefined;
    beforeAll(async () => {
      context = await launchChromium();
    }, 240_000);
    afterAll(async () => {
      await context?.close();
      repo?.remove();
    });

    it('fresh, then not started, a run in progress, then merged: each shown as it is', async () => {
      repo = makeRepo({
        'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
        'README.md': '# greeting\n',
      });
      const root = repo.dir;
      const coachgate = (...args: string[]) => {
        const done = spawnSync(process.execPath, [CLI, ...args, '--worktree', root], {
          encoding: 'utf8',
        });
        expect(done.status, done.stdout + done.stderr).toBe(0);
      };
      const ui = await startUi([], root);
      const { page, problems } = await watchedPage(context, ui.url);
      await page.goto(ui.url);
      const main = page.locator('main');

      // A fresh repository: nothing recorded is nothing wrong.
      await expect.poll(() => main.innerText(), POLL).toContain('No task files and no records');
      expect(await page.locator('.notice').count()).toBe(0);
      expect(await page.locator('.alert').count()).toBe(0);

      // A task file: the Tasks card lists it as the graph does.
      coachgate(
        ...['task', 'new', '--title', 'Greeting'],
        ...['--criterion', 'greet(name) returns "Hello, <name>!"'],
        ...['--criterion', 'greet rejects an empty name with a TypeError'],
      );
      const card = page.locator('.task-card[data-task="TASK-001"]');
      await expect.poll(() => card.count(), POLL).toBe(1);
      expect(await cardIds(page)).toEqual(['TASK-001']);
      expect(await nodeIds(page)).toEqual(['TASK-001']);
      expect(await page.locator('.column h3', { hasText: 'not started' }).count()).toBe(1);
      expect(await page.locator('.notice').count()).toBe(0);

      // The task's first run, held open: shown, and the page opens on it.
      coachgate('worktree', 'start', '--task', 'TASK-001');
      const worktree = path.join(root, '.guardkit/worktrees/TASK-001');
      repo.write('.guardkit/worktrees/TASK-001/src/greet.js', GOOD_GREET);
      repo.write('.guardkit/worktrees/TASK-001/test/greet.test.js', GREET_TESTS);
      repo.write('.guardkit/worktrees/TASK-001/test/held.test.js', HELD_TEST);
      const { client, close } = await connect({ roots: [root] });
      try {
        const task = { worktree, task_id: 'TASK-001' };
        const running = callTool(client, 'run_independent_tests', task);
        await page.goto(ui.url);
        const detail = page.locator('[data-detail="TASK-001"]');
        await expect
          .poll(() => detail.locator('.facts').textContent(), POLL)
          .toContain('run in progress');
        expect(await card.locator('.chip.running').textContent()).toBe('run in progress');
        expect(await page.locator('.notice').count()).toBe(0);
        writeFileSync(path.join(worktree, 'go'), '');
        expect(dataOf(await running).status).toBe('passed');
        await expect.poll(() => card.locator('.chip.running').count(), POLL).toBe(0);

        rmSync(path.join(worktree, 'go'));
        rmSync(path.join(worktree, 'test/held.test.js'));
        const files = ['src/greet.js', 'test/greet.test.js'];
        expect(await approveGreeting(client, worktree, 'TASK-001', files)).toBe('approved');
      } finally {
        await close();
        await stopTreeRuns();
      }

      // Merged by `worktree finish`: the gate passes, so the page does not call it stale.
      coachgate('worktree', 'finish', '--task', 'TASK-001', '--auto-merge');
      expect(runGate(root, 'TASK-001').status).toBe(0);
      // A second task, in progress: a fresh page opens on it, not on the approved one.
      coachgate('task', 'new', '--title', 'Farewell', '--criterion', 'farewell(name) says bye');
      const second = await connect({ roots: [root] });
      try {
        dataOf(
          await callTool(second.client, 'record_player_report', {
            worktree: root,
            task_id: 'TASK-002',
            turn: 1,
            report: { tests_passed: false, files_created: [] },
          }),
        );
      } finally {
        await second.close();
      }
      // The page picks its task on its first answer: once the server's model has TASK-002 in progress.
      const statusOf = async (id: string) => {
        const data: any = await (await fetch(new URL('api/dashboard', ui.url))).json();
        return data.tasks.find((task: any) => task.id === id)?.status;
      };
      await expect.poll(() => statusOf('TASK-002'), POLL).toBe('in_progress');
      await page.goto(ui.url);
      await expect.poll(() => page.locator('[data-detail="TASK-002"]').count(), POLL).toBe(1);
      await page.locator('.task-card[data-task="TASK-001"]').click();
      const merged = page.locator('[data-detail="TASK-001"]');
      await expect.poll(() => merged.count(), POLL).toBe(1);
      const facts = await merged.locator('.facts').textContent();
      expect(facts).toMatch(/merged\w{12} into main: the 2 approved file\(s\) unchanged/);
      expect(facts).toContain('its approved tree was merged');
      expect(facts).not.toMatch(/stale|base moved/);
      const approvedTurn = merged.locator('.turn').last();
      expect(await approvedTurn.locator('.verdict').textContent()).toContain('Approved');
      expect(await approvedTurn.locator('details.feedback').count()).toBe(0);
      await screenshot(page, MERGED_SCREENSHOT);
      ui.child.kill('SIGTERM');
      expect(problems).toEqual([]);
    }, 400_000);
  },
);
