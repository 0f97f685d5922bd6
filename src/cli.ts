#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { runDemo } from './demo.js';
import { createServer } from './server.js';
import { VERSION } from './version.js';

const USAGE = `coachgate ${VERSION} — MCP server that verifies a Player agent's work for a Coach agent

Usage:
  coachgate [serve] [--root DIR ...] [--base REF]   serve MCP over stdio (default)
  coachgate demo                                   run the Player/Coach demo on the bundled example
  coachgate --help | --version

Options:
  --root DIR    allowed directory for worktrees (repeatable). Default: the client's MCP roots, else the cwd.
  --base REF    trusted base commit/branch (overrides coachgate.base_ref and the merge-base with main/master).
  -h, --help    show this help
  -v, --version print the version
`;

/** Exit code 2 is for usage errors, so scripts can tell them from failures. */
function usageError(message: string): never {
  process.stderr.write(`coachgate: ${message}\nRun "coachgate --help" for usage.\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        root: { type: 'string', multiple: true },
        base: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
    });
  } catch (error) {
    usageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  // --help and --version are the only things coachgate ever prints to stdout: in serve mode stdout is MCP's.
  if (values.help) return void process.stdout.write(USAGE);
  if (values.version) return void process.stdout.write(`${VERSION}\n`);
  const [command = 'serve', ...extra] = positionals;
  if (extra.length > 0) usageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (command === 'demo') {
    process.exitCode = await runDemo((line) => process.stdout.write(`${line}\n`));
    return;
  }
  if (command !== 'serve') usageError(`unknown command ${JSON.stringify(command)}`);
  const roots = (values.root ?? []).map((root) => path.resolve(root));
  const missing = roots.find((root) => !existsSync(root));
  if (missing) usageError(`--root ${missing} does not exist`);
  const server = createServer({ roots, base: values.base });
  await server.connect(new StdioServerTransport());
  process.stderr.write(`coachgate ${VERSION} serving MCP on stdio\n`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`coachgate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
