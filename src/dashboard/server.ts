import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dashboardHandler } from './handler.js';

export interface RunningDashboard {
  url: string;
  close(): Promise<void>;
}

/**
 * `coachgate ui`: the dashboard on 127.0.0.1 only. Requests must name this server in Host (and Origin,
 * when a browser sends one), so a web page elsewhere cannot read it through DNS rebinding.
 */
export async function startDashboard(worktree: string, port: number): Promise<RunningDashboard> {
  let allowed = new Set<string>();
  const handle = dashboardHandler(worktree, { prefix: '' });
  const server = createServer((request, response) => {
    if (!fromThisServer(request, allowed)) {
      response.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('Host or Origin not allowed (DNS-rebinding protection).\n');
      return;
    }
    handle(request, response).catch((error: unknown) => {
      process.stderr.write(`coachgate ui: ${(error as Error).stack ?? String(error)}\n`);
      if (!response.headersSent) response.writeHead(500).end('Internal error.\n');
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  allowed = new Set([`127.0.0.1:${bound}`, `localhost:${bound}`]);
  return {
    url: `http://127.0.0.1:${bound}/`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function fromThisServer(request: IncomingMessage, allowed: Set<string>): boolean {
  const origin = request.headers.origin;
  return (
    allowed.has(request.headers.host ?? '') &&
    (origin === undefined || allowed.has(origin.replace(/^http:\/\//, '')))
  );
}
