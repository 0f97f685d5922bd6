import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-imports-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Starts a built entry point under a loader hook that records every module it loads. */
async function modulesLoadedUntilToolsList(entry: string): Promise<string[]> {
  const log = path.join(scratch, `${path.basename(path.dirname(entry))}.log`);
  const hooks = path.join(scratch, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}`,
  );
  const register = `import { register } from 'node:module'; register(${JSON.stringify(pathToFileURL(hooks).href)});`;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      '--import',
      `data:text/javascript,${encodeURIComponent(register)}`,
      entry,
      '--root',
      scratch,
      '--state-dir',
      process.env.COACHGATE_STATE_DIR!,
    ],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'imports-test', version: '0' });
  await client.connect(transport);
  expect((await client.listTools()).tools.length).toBeGreaterThan(10);
  await client.close();
  return readFileSync(log, 'utf8').trim().split('\n');
}

// The TypeScript compiler alone costs ~0.5 s; execa ~100 modules; the HTTP transport brings hono.
const HEAVY = /node_modules\/(typescript|execa|hono|@hono)\//;

describe('start-up loads no heavy module before tools/list', () => {
  it.each(['dist', 'bundle'])('%s/cli.js', async (directory) => {
    const entry = fileURLToPath(new URL(`../${directory}/cli.js`, import.meta.url));
    const loaded = await modulesLoadedUntilToolsList(entry);
    expect(loaded.some((url) => url.endsWith(`${directory}/cli.js`))).toBe(true);
    expect(loaded.filter((url) => HEAVY.test(url))).toEqual([]);
    if (directory === 'bundle') expect(loaded.length).toBeLessThan(40);
  });
});
