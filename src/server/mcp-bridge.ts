import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LineDelimitedStdioTransport } from './stdio-transport.js';

/**
 * `coachgate` started on stdio by an agent inside the autobuild driver's sandbox: the state directory
 * is hidden there, so instead of serving from it, it relays every frame to the driver's endpoint
 * (`$COACHGATE_MCP_URL`, player role). An agent configured with `coachgate --role player` keeps
 * working unchanged, and can never get more than the endpoint's role.
 */
export async function relayStdioTo(url: string, token: string): Promise<void> {
  const remote = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const local = new LineDelimitedStdioTransport();
  const fail = (error: Error) =>
    process.stderr.write(`coachgate: relay to ${url} failed: ${error.message}\n`);
  local.onmessage = (message) => void remote.send(message).catch(fail);
  remote.onmessage = (message) => void local.send(message).catch(fail);
  remote.onerror = fail;
  local.onclose = () => void remote.close().finally(() => process.exit(0));
  await remote.start();
  await local.start();
  process.stderr.write(`coachgate: relaying stdio to the autobuild driver's endpoint ${url}\n`);
}
