#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { commandHelp } from './cli/help.js';
import { INIT_USAGE } from './cli/init.js';
import { LOOP_COMMANDS, LOOP_USAGE, runLoopCommand } from './cli/loop.js';
import {
  runStateCommand,
  STATE_OPTIONS_USAGE,
  STATE_USAGE,
  takeGlobalOptions,
} from './cli/state.js';
import { parseServeOptions, ServeUsageError, type ServeOptions } from './server/serve-options.js';
import { stopOnHostExit } from './server/lifecycle.js';
import { initKey, privateKeyPath } from './records/keys.js';
import { hideFromRuns, isHiddenEverywhere } from './sandbox/exposure.js';
import { stateRoot } from './records/state-directory.js';
import { createServer } from './server/create-server.js';
import { collectWhenIdleAfterBursts } from './server/idle-collection.js';
import { LineDelimitedStdioTransport } from './server/stdio-transport.js';
import { VERSION } from './package.js';
import { CallerError } from './errors/errors.js';
import { UI_USAGE } from './dashboard/usage.js';

const USAGE = `coachgate ${VERSION} — MCP server that verifies a Player agent's work for a Coach agent

Usage:
  coachgate [serve] [--root DIR ...] [--base REF] [--role player|coach|all] [--toolsets LIST] [--read-only]
                                                   serve MCP over stdio (default)
  coachgate serve --http [HOST:]PORT --tokens FILE --root DIR ... [--allowed-hosts LIST] [--allowed-origins LIST]
                                                   serve MCP over Streamable HTTP (loopback unless HOST says
                                                   otherwise); each bearer token in FILE carries its role
${INIT_USAGE}
${LOOP_USAGE}
  coachgate demo [--keep DIR]                      run the Player/Coach demo on the bundled example
                                                   (--keep: in DIR, kept for \`coachgate ui --root DIR\`)
${UI_USAGE}
${STATE_USAGE}
  coachgate doctor                                 show the node, Python, package managers and PATH
                                                   the server finds (run it the way your MCP host does)
  coachgate --help | --version

Options:
  --root DIR      allowed directory for worktrees (repeatable). Default: the client's MCP roots, else the cwd.
  --base REF      trusted base commit/branch (overrides coachgate.base_ref and the merge-base with main/master).
  --role ROLE     tools for one agent: player (no verdict), coach (no Player report) or all (default).
  --toolsets LIST comma-separated: tasks, report, verify, verdict, utilities, worktrees, all.
  --read-only     serve only tools that change nothing (readOnlyHint true).
  --http ADDR     Streamable HTTP on [HOST:]PORT at /mcp instead of stdio.
  --tokens FILE   --http: YAML or JSON mapping each bearer token (16+ characters) to player, coach or all.
  --allowed-hosts LIST, --allowed-origins LIST
                  --http: extra Host header values (host:port) and Origins to accept (DNS-rebinding checks).
  --max-sessions N
                  --http: sessions one token may hold open at once (default 16); more get HTTP 503.
  --idle-timeout SECONDS
                  --http: close a session unused this long (default 900).
  --task ID       the task to check or run.
  --worktree DIR  the repository (default: the current directory).
${STATE_OPTIONS_USAGE}
  -h, --help      show this help
  -v, --version   print the version
`;

const SERVE_ONLY_FLAGS = [
  'role',
  'toolsets',
  'read-only',
  'http',
  'tokens',
  'allowed-hosts',
  'allowed-origins',
  'max-sessions',
  'idle-timeout',
] as const;

/** The one place coachgate writes to stdout: --help, --version, gate and demo. Serve mode never calls it. */
function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Exit code 2 is for usage errors, so scripts can tell them from failures. */
function usageError(message: string): never {
  process.stderr.write(`coachgate: ${message}\nRun "coachgate --help" for usage.\n`);
  process.exit(2);
}

async function main(allArgs: string[]): Promise<void> {
  // --state-dir and --sandbox apply to every command (serve, gate, worktree, autobuild, key, task).
  let argv: string[];
  try {
    argv = takeGlobalOptions(allArgs);
  } catch (error) {
    usageError((error as Error).message);
  }
  const wantsHelp = argv.includes('--help') || argv.includes('-h');
  const first = argv[0] ?? '';
  const help = wantsHelp && /^[a-z]/.test(first) ? commandHelp(USAGE, first) : undefined;
  if (help) return print(help);
  if (argv[0] === 'ui' && !wantsHelp) {
    const { uiCommand } = await import('./cli/ui.js');
    process.exitCode = await uiCommand(argv.slice(1), print);
    return;
  }
  if (LOOP_COMMANDS.has(argv[0] ?? '') && !wantsHelp) {
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
        role: { type: 'string' },
        toolsets: { type: 'string' },
        'read-only': { type: 'boolean' },
        http: { type: 'string' },
        tokens: { type: 'string' },
        'allowed-hosts': { type: 'string' },
        'allowed-origins': { type: 'string' },
        keep: { type: 'string' },
        'max-sessions': { type: 'string' },
        'idle-timeout': { type: 'string' },
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
  if (command === 'key') {
    process.exitCode = await runStateCommand(positionals, {}, print);
    return;
  }
  if (command === 'doctor') {
    const { doctorReport, formatDoctorReport } = await import('./cli/doctor.js');
    return print(formatDoctorReport(await doctorReport()));
  }
  if (extra.length > 0) usageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  const serveFlag = SERVE_ONLY_FLAGS.find((flag) => values[flag] !== undefined);
  if (command !== 'serve' && serveFlag) usageError(`--${serveFlag} belongs to the serve command`);
  if (values.keep !== undefined && command !== 'demo') usageError('--keep belongs to demo');
  if (command === 'demo') {
    const { runDemo } = await import('./cli/demo.js');
    process.exitCode = await runDemo(print, values.keep);
    return;
  }
  if (command !== 'serve') usageError(`unknown command ${JSON.stringify(command)}`);
  let options: ServeOptions;
  try {
    options = parseServeOptions(values);
  } catch (error) {
    if (error instanceof ServeUsageError) usageError(error.message);
    throw error;
  }
  const { COACHGATE_MCP_URL: relayUrl, COACHGATE_MCP_TOKEN: relayToken } = process.env;
  if (!options.http && relayUrl && relayToken) {
    // Inside the driver's Player sandbox (docs/sandbox.md, "The Player agent").
    const { relayStdioTo } = await import('./server/mcp-bridge.js');
    return relayStdioTo(relayUrl, relayToken);
  }
  // The key exists before any session can start a run (a key made later could be the Player's).
  const { key } = await initKey();
  process.stderr.write(`coachgate: signing with key ${key.key_id} (${privateKeyPath()})\n`);
  if (options.http) {
    // Imported only for --http: the SDK's HTTP transport brings hono, which stdio never needs.
    const { serveHttp } = await import('./server/http.js');
    // The tokens file is the coach's authority: no run of the Player's code may read it. This server
    // hides it wherever it is; other coachgate processes (gate in a hook, the autobuild driver's
    // sandboxed Player) hide only the state directory, so it belongs there.
    hideFromRuns(options.http.tokensFile);
    if (!isHiddenEverywhere(options.http.tokensFile))
      process.stderr.write(
        `coachgate: warning: --tokens ${options.http.tokensFile} is outside the state directory; runs started by other coachgate processes (gate, a sandboxed Player) could read it. Move it under ${stateRoot()}.\n`,
      );
    await serveHttp(options.server, options.http);
    return;
  }
  const stop = stopOnHostExit((line) => process.stderr.write(`${line}\n`));
  const server = createServer(options.server);
  server.server.onclose = () => void stop('transport closed');
  await server.connect(new LineDelimitedStdioTransport());
  process.stdin.on('data', collectWhenIdleAfterBursts());
  process.stderr.write(
    `coachgate ${VERSION} serving MCP on stdio (role ${options.server.role ?? 'all'})\n`,
  );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  // A caller's problem (a damaged key, say) is said plainly; only an internal fault shows its stack.
  const text =
    error instanceof CallerError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`coachgate: ${text}\n`);
  process.exit(1);
});
