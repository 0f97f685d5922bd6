import { randomBytes } from 'node:crypto';
import { startHttpServer } from '../server/http.js';
import { TokenTable } from '../server/http-tokens.js';

/** The coachgate endpoint a sandboxed Player records its report through. */
export interface PlayerEndpoint {
  url: string;
  /** A fresh player token, valid for this driver run only and never written to disk. */
  token: string;
  close(): Promise<void>;
}

/**
 * A player-role Streamable HTTP server on 127.0.0.1 for one driver run. A confined Player cannot see
 * the state directory, so a coachgate server it started itself could record nothing; this one runs
 * in the driver, outside the sandbox, and lists only the Player's tools to the token it hands out.
 */
export async function startPlayerEndpoint(worktree: string): Promise<PlayerEndpoint> {
  const token = randomBytes(32).toString('hex');
  const running = await startHttpServer(
    { roots: [worktree] },
    { host: '127.0.0.1', port: 0, allowedHosts: [], allowedOrigins: [] },
    TokenTable.single(token, 'player'),
  );
  return { url: running.url, token, close: () => running.close() };
}
