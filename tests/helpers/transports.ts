import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startHttpServer } from '../../src/server/http.js';
import { TokenTable } from '../../src/server/http-tokens.js';
import { connect } from './mcp.js';
import { CLI as cli } from './cli.js';

/** Every way a client reaches coachgate: the SDK's in-memory pair, the built binary, Streamable HTTP. */
export const TRANSPORTS = ['in-memory', 'stdio', 'http'] as const;
export type TransportKind = (typeof TRANSPORTS)[number];

const TOKEN = 'all-role-token-0123456789abcdef';

/**
 * A real MCP client for a server with role `all` serving `root`, over the given transport. stdio runs
 * bundle/cli.js (the bin) as a child with this test file's state directory; HTTP serves on a loopback port.
 */
export async function connectOver(
  kind: TransportKind,
  root: string,
): Promise<{ client: Client; close(): Promise<void> }> {
  if (kind === 'in-memory') return connect({ roots: [root] });
  const client = new Client({ name: `coachgate-${kind}-test`, version: '0.0.0' });
  if (kind === 'stdio') {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, '--root', root, '--state-dir', process.env.COACHGATE_STATE_DIR!],
      stderr: 'ignore',
    });
    await client.connect(transport);
    return { client, close: () => client.close() };
  }
  const secrets = mkdtempSync(path.join(os.tmpdir(), 'coachgate-tokens-'));
  const tokensFile = path.join(secrets, 'tokens.yaml');
  writeFileSync(tokensFile, `${TOKEN}: all\n`);
  chmodSync(tokensFile, 0o600);
  const { table } = await TokenTable.load(tokensFile);
  const server = await startHttpServer(
    { roots: [root] },
    { host: '127.0.0.1', port: 0, allowedHosts: [], allowedOrigins: [] },
    table,
  );
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
  });
  await client.connect(transport);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
      rmSync(secrets, { recursive: true, force: true });
    },
  };
}
