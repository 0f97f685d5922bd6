import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createServer, type ServerOptions } from '../../src/server/create-server.js';

/** A real MCP client connected to a fresh server over the SDK's in-memory transport. */
export async function connect(
  options: ServerOptions = {},
): Promise<{ client: Client; close(): Promise<void> }> {
  const server = createServer(options);
  const client = new Client({ name: 'coachgate-test', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    client,
    async close() {
      await client.close();
      await server.close();
    },
  };
}

/**
 * How long a test waits for one answer. The SDK's default, 60 s, is a client's patience, not a
 * behaviour under test: on a busy two-core CI machine an approval's trusted runs can take longer,
 * and a test's own timeout (180 s, 240 s) is what says a call hangs.
 */
export const CALL_TIMEOUT_MS = 170_000;

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: CALL_TIMEOUT_MS,
  })) as CallToolResult;
}

export function textOf(result: CallToolResult): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** structuredContent of a successful call; fails the test with the error text otherwise. */
export function dataOf<T = Record<string, any>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool returned an error: ${textOf(result)}`);
  return result.structuredContent as T;
}
