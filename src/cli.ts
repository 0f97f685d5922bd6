#!/usr/bin/env node
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { gateDecision } from './actions/gate.js';
import { openTask } from './actions/task-scope.js';
import { CallerError } from './core/errors.js';
import { runDemo } from './demo.js';
import { stopOnHostExit } from './lifecycle.js';
import { createServer } from './server.js';
import { LineDelimitedStdioTransport } from './stdio-transport.js';
import { VERSION } from './version.js';

const USAGE = `coachgate ${VERSION} — MCP server that verifies a Player agent's work for a Coach agent

Usage:
  coachgate [serve] [--root DIR ...] [--base REF]   serve MCP over stdio (default)
  coachgate gate --task ID [--worktree DIR] [--base REF]
                                                   for hooks and CI: exit 0 only if the task is approved
                                                   and nothing changed since the approving test run
  coachgate demo                                   run the Player/Coach demo on the bundled example
  coachgate doctor                                 show the node, Python, package managers and PATH
                                                   the server finds (run it the way your MCP host does)
  coachgate --help | --version

Options:
  --root DIR      allowed directory for worktrees (repeatable). Default: the client's MCP roots, else the cwd.
  --base REF      trusted base commit/branch (overrides coachgate.base_ref and the merge-base with main/master).
  --task ID       gate: the task to check.
  --worktree DIR  gate: the repository (default: the current directory).
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
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        root: { type: 'string', multiple: true },
        base: { type: 'string' },
        task: { type: 'string' },
        worktree: { type: 'string' },
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
  if (command !== 'gate' && (values.task || values.worktree)) usageError('--task and --worktree belong to the gate command');
  if (command === 'gate') {
    if (!values.task) usageError('gate needs --task ID');
    process.exitCode = await runGate(path.resolve(values.worktree ?? '.'), values.task, values.base);
    return;
  }
  if (command === 'doctor') {
    const { doctorReport, formatDoctorReport } = await import('./doctor.js');
    return print(formatDoctorReport(await doctorReport()));
  }
  if (command === 'demo') {
    process.exitCode = await runDemo(print);
    return;
  }
  if (command !== 'serve') usageError(`unknown command ${JSON.stringify(command)}`);
  const roots = (values.root ?? []).map((root) => path.resolve(root));
  const missing = roots.find((root) => !existsSync(root));
  if (missing) usageError(`--root ${missing} does not exist`);
  const stop = stopOnHostExit((line) => process.stderr.write(`${line}\n`));
  const server = createServer({ roots, base: values.base });
  server.server.onclose = () => void stop('transport closed');
  await server.connect(new LineDelimitedStdioTransport());
  process.stderr.write(`coachgate ${VERSION} serving MCP on stdio\n`);
}

/** Exit 0 when the gate passes, 1 when it does not (with the reasons), 2 for a caller mistake. */
async function runGate(worktree: string, taskId: string, base: string | undefined): Promise<number> {
  try {
    const decision = await gateDecision(await openTask(worktree, taskId, base));
    const lines = decision.pass ? [`coachgate gate: ${taskId} PASS (approved, tests passed on the current tree)`] : [`coachgate gate: ${taskId} FAIL`, ...decision.reasons.map((reason) => `  - ${reason}`)];
    print(lines.join('\n'));
    return decision.pass ? 0 : 1;
  } catch (error) {
    if (!(error instanceof CallerError)) throw error;
    process.stderr.write(`coachgate gate: ${error.message}\n`);
    return 2;
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`coachgate: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
