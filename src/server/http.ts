import { randomUUID } from 'node:crypto';
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { DashboardHandler } from '../dashboard/handler.js';
import { TokenTable, type TokenEntry } from './http-tokens.js';
import {
  DEFAULT_IDLE_TIMEOUT_S,
  DEFAULT_MAX_SESSIONS,
  type ServeOptions,
} from './serve-options.js';
import { createServer, type ServerOptions } from './create-server.js';
import { killAllRuns } from '../runner/process-tree.js';
import { VERSION } from '../package.js';

export type HttpOptions = NonNullable<ServeOptions['http']>;

export interface RunningHttpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:8123/mcp. */
  url: string;
  close(): Promise<void>;
}

/** Requests larger than this are refused (413): no MCP request coachgate answers comes near it. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;

interface Session {
  transport: StreamableHTTPServerTransport;
  /** The token entry that opened the session: only the same token may use it. */
  tokenIndex: number;
  lastUsed: number;
}

/**
 * Streamable HTTP at /mcp: one MCP server per session, with the role of the bearer token that opened it.
 * Checks run in this order: Host and Origin (DNS rebinding, 403), token (401), session (404 / 403).
 */
export async function startHttpServer(
  serverOptions: ServerOptions,
  options: Omit<HttpOptions, 'tokensFile' | 'maxSessions' | 'idleTimeoutMs'> &
    Partial<Pick<HttpOptions, 'maxSessions' | 'idleTimeoutMs'>>,
  tokens: TokenTable,
): Promise<RunningHttpServer> {
  const sessions = new Map<string, Session>();
  // Sessions unused this long are closed, so clients that vanish without DELETE do not pile up.
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_S * 1000;
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  /** Initializations under way per token: counted with the open sessions, so a burst cannot slip past. */
  const opening = new Map<number, number>();
  const held = (index: number) =>
    (opening.get(index) ?? 0) +
    [...sessions.values()].filter((session) => session.tokenIndex === index).length;
  const sweeper = setInterval(
    () => {
      for (const session of sessions.values()) {
        if (Date.now() - session.lastUsed > idleTimeoutMs) void session.transport.close();
      }
    },
    Math.min(idleTimeoutMs, 60_000),
  );
  sweeper.unref();
  let dashboard: Promise<DashboardHandler> | undefined;
  let allowedHosts = new Set<string>();
  let allowedOrigins = new Set<string>();

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (!allowedHosts.has(request.headers.host ?? '')) {
      return reject(
        response,
        403,
        'Host header not allowed (DNS-rebinding protection); see --allowed-hosts.',
      );
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !allowedOrigins.has(origin)) {
      return reject(
        response,
        403,
        'Origin not allowed (DNS-rebinding protection); see --allowed-origins.',
      );
    }
    const pathname = new URL(request.url ?? '/', 'http://host').pathname;
    if (isDashboardPath(pathname) && serverOptions.roots?.[0]) {
      dashboard ??= dashboardFor(serverOptions.roots[0], tokens);
      return (await dashboard)(request, response);
    }
    if (pathname !== '/mcp') {
      return reject(response, 404, 'The MCP endpoint is /mcp (and the dashboard is at /ui/).');
    }
    const token = tokens.match(request.headers.authorization);
    if (!token) {
      response.setHeader('WWW-Authenticate', 'Bearer realm="coachgate"');
      return reject(
        response,
        401,
        'Missing or unknown bearer token: send Authorization: Bearer <token>.',
      );
    }
    let body: unknown;
    if (request.method === 'POST') {
      const read = await readJson(request);
      if ('error' in read) return reject(response, read.status, read.error, read.code);
      body = read.value;
    }
    const sessionId = request.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session)
        return reject(response, 404, 'Unknown or closed session: initialize a new one.');
      if (session.tokenIndex !== token.index) {
        return reject(response, 403, 'This session was opened with another token.');
      }
      session.lastUsed = Date.now();
      return session.transport.handleRequest(request, response, body);
    }
    if (request.method !== 'POST' || !isInitializeRequest(body)) {
      return reject(response, 400, 'No session: send an initialize request first.');
    }
    if (held(token.index) >= maxSessions) {
      response.setHeader('Retry-After', String(Math.ceil(idleTimeoutMs / 1000)));
      return reject(
        response,
        503,
        `Too many sessions: this token already holds ${maxSessions} open sessions (--max-sessions). Close one (DELETE /mcp with its mcp-session-id), or wait: sessions unused for ${Math.round(idleTimeoutMs / 1000)} s are closed (--idle-timeout).`,
      );
    }
    opening.set(token.index, (opening.get(token.index) ?? 0) + 1);
    try {
      await openSession(request, response, body, token);
    } finally {
      opening.set(token.index, opening.get(token.index)! - 1);
    }
  }

  async function openSession(
    request: IncomingMessage,
    response: ServerResponse,
    body: unknown,
    token: TokenEntry,
  ): Promise<void> {
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) =>
        void sessions.set(id, { transport, tokenIndex: token.index, lastUsed: Date.now() }),
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await createServer({ ...serverOptions, role: token.role }).connect(transport);
    await transport.handleRequest(request, response, body);
  }

  const http = createHttpServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      process.stderr.write(`coachgate: HTTP request failed: ${message}\n`);
      if (!response.headersSent) reject(response, 500, 'Internal error.');
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  const names = isLoopback(options.host)
    ? ['127.0.0.1', 'localhost', '[::1]']
    : [hostForUrl(options.host)];
  allowedHosts = new Set([...names.map((name) => `${name}:${port}`), ...options.allowedHosts]);
  allowedOrigins = new Set([
    ...[...allowedHosts].map((host) => `http://${host}`),
    ...options.allowedOrigins,
  ]);
  return {
    url: `http://${hostForUrl(options.host)}:${port}/mcp`,
    async close() {
      clearInterval(sweeper);
      await Promise.all([...sessions.values()].map((session) => session.transport.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** `coachgate serve --http`: loads the tokens, serves until SIGINT/SIGTERM. Tokens are never printed. */
export async function serveHttp(serverOptions: ServerOptions, options: HttpOptions): Promise<void> {
  const { table, warnings } = await TokenTable.load(options.tokensFile);
  for (const warning of warnings) process.stderr.write(`coachgate: warning: ${warning}\n`);
  if (!isLoopback(options.host)) {
    const warning = `listening on ${options.host}, beyond this machine; put TLS in front of it`;
    process.stderr.write(`coachgate: warning: ${warning}\n`);
  }
  const running = await startHttpServer(serverOptions, options, table);
  process.stderr.write(`coachgate ${VERSION} serving MCP over Streamable HTTP at ${running.url}\n`);
  // Running test trees die with the server, as on stdio.
  const stop = () =>
    void running
      .close()
      .then(() => killAllRuns())
      .finally(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** The read-only dashboard of the first root at /ui/: the page is public, its data needs a coach token. */
function isDashboardPath(pathname: string): boolean {
  return pathname === '/ui' || pathname.startsWith('/ui/');
}

async function dashboardFor(root: string, tokens: TokenTable): Promise<DashboardHandler> {
  const { dashboardHandler } = await import('../dashboard/handler.js');
  return dashboardHandler(root, {
    prefix: '/ui',
    authorize: (request) => {
      const role = tokens.match(request.headers.authorization)?.role;
      return role === 'coach' || role === 'all';
    },
  });
}

type BodyRead = { value: unknown } | { status: number; code: number; error: string };

async function readJson(request: IncomingMessage): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      return { status: 413, code: -32600, error: `Request body over ${MAX_BODY_BYTES} bytes.` };
    }
    chunks.push(chunk);
  }
  try {
    return { value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { status: 400, code: -32700, error: 'Parse error: the body is not JSON.' };
  }
}

/** A JSON-RPC error body, as the SDK's transport answers its own HTTP errors. */
function reject(response: ServerResponse, status: number, message: string, code = -32000): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  response.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
