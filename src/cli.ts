#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { LOOP_COMMANDS, LOOP_USAGE, runLoopCommand } from './cli-loop.js';
import { runDemo } from './demo.js';
import { createServer } from './server.js';
import { VERSION } from './version.js';

const USAGE = `coachgate ${VERSION} — MCP server that verifies a Player agent's work for a Coach agent

Usage:
  coachgate [serve] [--root DIR ...] [--base REF]   serve MCP over stdio (default)
${LOOP_USAGE}
  coachgate demo                                   run the Player/Coach demo on the bundled example
  coachgate --help | --version

Options:
  --root DIR      allowed directory for worktrees (repeatable). Default: the client's MCP roots, else the cwd.
  --base REF      trusted base commit/branch (overrides coachgate.base_ref and the merge-base with main/master).
  --task ID       the task to check or run.
  --worktree DIR  the repository (default: the current directory).
  -h, --help      show this help
  -v, --version   print the version
`;

/** The one place coachgate writes to stdout: --help, --version, gate and demo. Serve mode never calls it. */
function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Exit code 2 is for usage errors, so scripts can tell them from failures. */
function usageError(message: string): never {
  process.stderr.write(`coachgate: ${message}\nRun "coachgate --help" for usage.\n`);
  process.exit(2);
}

async function main(argv: string[]): Promise<void> {
  if (LOOP_COMMANDS.has(argv[0] ?? '') && !argv.includes('--help') && !argv.includes('-h')) {
    process.exitCode = await runLoopCommand(argv, print);
    return;
  }
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
  // In serve mode stdout is MCP's: nothing before the transport may print there.
  if (values.help) return print(USAGE.trimEnd());
  if (values.version) return print(VERSION);
  const [command = 'serve', ...extra] = positionals;
  if (extra.length > 0) usageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  if (command === 'demo') {
    process.exitCode = await runDemo(print);
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
