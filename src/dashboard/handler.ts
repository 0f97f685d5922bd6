/**
 * The dashboard over HTTP, read-only: the static page, its JSON model and bounded run logs. Only GET and
 * HEAD are answered; nothing a request says is written anywhere. Mounted by `coachgate ui` (at /) and by
 * `serve --http` (at /ui/, its data behind a coach token).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { PACKAGE_ROOT } from '../package.js';
import { readDashboard, readRunLog } from './read.js';
import type { Dashboard } from './model.js';

/**
 * Scripts, styles and data come from this origin only; no inline script or style, no frames, no forms,
 * no plugins: task text and test output are rendered with textContent, and the CSP backs that up.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

const PAGE_FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/app.css': { file: 'app.css', type: 'text/css; charset=utf-8' },
};

/** The model is rebuilt at most this often, however many pages poll it. */
const MODEL_TTL_MS = 1000;

export interface DashboardHandlerOptions {
  /** Path the dashboard is mounted at: '' (its own server) or e.g. '/ui'. */
  prefix: string;
  /** Whether a request may read the data (the page itself holds none); default: every request. */
  authorize?: (request: IncomingMessage) => boolean;
}

export type DashboardHandler = (
  request: IncomingMessage,
  response: ServerResponse,
) => Promise<void>;

export function dashboardHandler(
  worktree: string,
  options: DashboardHandlerOptions,
): DashboardHandler {
  const model = cachedModel(worktree);
  return async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('Allow', 'GET, HEAD');
      return send(response, 405, 'text/plain; charset=utf-8', 'The dashboard is read-only.\n');
    }
    const url = new URL(request.url ?? '/', 'http://dashboard');
    if (url.pathname === options.prefix && options.prefix !== '') {
      response.setHeader('Location', `${options.prefix}/`);
      return send(response, 308, 'text/plain; charset=utf-8', '');
    }
    const route = url.pathname.slice(options.prefix.length);
    const page = PAGE_FILES[route];
    if (page) return send(response, 200, page.type, await pageFile(page.file));
    // Browsers ask for it on their own; an empty answer keeps their consoles free of 404s.
    if (route === '/favicon.ico') return send(response, 204, 'image/x-icon', '');
    if (!route.startsWith('/api/'))
      return send(response, 404, 'text/plain; charset=utf-8', 'Not found.\n');
    if (options.authorize && !options.authorize(request)) {
      response.setHeader('WWW-Authenticate', 'Bearer realm="coachgate"');
      return sendJson(response, 401, { error: 'A coach token is needed: Authorization: Bearer.' });
    }
    if (route === '/api/dashboard') {
      const { body, etag } = await model();
      response.setHeader('ETag', etag);
      if (request.headers['if-none-match'] === etag)
        return send(response, 304, 'application/json', '');
      return send(response, 200, 'application/json; charset=utf-8', body);
    }
    if (route === '/api/log') {
      const task = url.searchParams.get('task') ?? '';
      const run = url.searchParams.get('run') ?? '';
      const log = await readRunLog(worktree, task, run).catch(() => undefined);
      if (!log)
        return sendJson(response, 404, { error: `No stored log for run ${run} of ${task}.` });
      return sendJson(response, 200, log);
    }
    return sendJson(response, 404, { error: 'Unknown endpoint.' });
  };
}

function cachedModel(worktree: string): () => Promise<{ body: string; etag: string }> {
  let latest: { at: number; value: Promise<{ body: string; etag: string }> } | undefined;
  return () => {
    if (!latest || Date.now() - latest.at > MODEL_TTL_MS) {
      const value = readDashboard(worktree).then(serialise);
      latest = { at: Date.now(), value };
      value.catch(() => (latest = undefined));
    }
    return latest.value;
  };
}

/** The ETag ignores generated_at, so an unchanged loop answers 304 to every poll. */
function serialise(dashboard: Dashboard): { body: string; etag: string } {
  const { generated_at: _generated, ...content } = dashboard;
  const digest = createHash('sha256').update(JSON.stringify(content)).digest('hex');
  return { body: JSON.stringify(dashboard), etag: `"${digest.slice(0, 32)}"` };
}

const pageCache = new Map<string, Promise<string>>();

function pageFile(name: string): Promise<string> {
  let text = pageCache.get(name);
  if (!text) {
    text = readFile(new URL(`src/dashboard/page/${name}`, PACKAGE_ROOT), 'utf8');
    pageCache.set(name, text);
  }
  return text;
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, 'application/json; charset=utf-8', JSON.stringify(value));
}

function send(response: ServerResponse, status: number, type: string, body: string): void {
  response.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': type });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}
