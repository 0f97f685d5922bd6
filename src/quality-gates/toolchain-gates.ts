import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { parseLintOutput, type ParsedLint } from './lint-findings.js';
import {
  buildGate,
  findingsGate,
  TOOLCHAIN_GATES,
  type BaseFindings,
  type CommandOutcome,
  type ToolchainGateName,
  type ToolchainGateResult,
} from './toolchain-rules.js';
import { withDetachedCheckout } from '../repo/checkout.js';
import { projectEnvironment } from '../runner/environment.js';
import { OutputCapture } from '../runner/output-capture.js';
import { runQueue } from '../runner/run-queue.js';
import { effectivePolicy } from '../sandbox/policy.js';
import { runSandboxed } from '../sandbox/run.js';
import { summarizeOutput } from '../runner/summary.js';
import { mirroredCacheFile, readStateCopy, writeMirrored } from '../records/mirrored.js';
import { parseJsonRecord } from '../records/files.js';
import { taskDirectory } from '../records/mirror-paths.js';

export interface ToolchainScope {
  worktree: string;
  taskId?: string;
  base: { commit: string };
  config: Config;
}

const DEFAULT_TIMEOUT_S = 300;
/** Linters print one line per finding; 16 MB is far beyond any real report and bounds memory. */
const MAX_PARSED_BYTES = 16 * 1024 * 1024;

/**
 * Runs every configured build / typecheck / lint command in the worktree, each to the end (no short-circuit),
 * in the same environment and process-tree discipline as the tests. Lint and typecheck are compared with the
 * same commands' errors at the pinned base, so only errors the Player introduced fail the gate.
 */
export async function runToolchainGates(
  scope: ToolchainScope,
  signal?: AbortSignal,
): Promise<ToolchainGateResult[]> {
  const configured = TOOLCHAIN_GATES.filter((name) => scope.config.toolchain?.[name]);
  if (configured.length === 0) return [];
  return runQueue.run(scope.worktree, async () => {
    const results: ToolchainGateResult[] = [];
    for (const name of configured) {
      const command = scope.config.toolchain![name]!;
      const logPath = scope.taskId
        ? path.join(taskDirectory(scope.worktree, scope.taskId), 'gates', `${name}.log`)
        : path.join(os.tmpdir(), 'coachgate-gates', `${process.pid}-${name}.log`);
      const { outcome, output } = await runConfiguredCommand(
        scope,
        scope.worktree,
        command,
        logPath,
        signal,
      );
      if (name === 'build') {
        results.push(buildGate(name, command, outcome));
        continue;
      }
      const current = parseLintOutput(output, scope.worktree);
      const needsBase = current !== undefined && current.findings.length > 0;
      const base = needsBase ? await baseFindings(scope, name, command, signal) : undefined;
      results.push(findingsGate(name, command, outcome, current, base));
    }
    return results;
  });
}

async function runConfiguredCommand(
  scope: ToolchainScope,
  cwd: string,
  command: string,
  logPath: string,
  signal?: AbortSignal,
): Promise<{ outcome: CommandOutcome; output: string }> {
  const environment = await projectEnvironment(cwd);
  const loginShell = scope.config.autobuild?.coach?.test_execution === 'login-shell';
  const argv = loginShell ? ['bash', '-lc', command] : ['sh', '-c', command];
  const timeoutMs = (scope.config.toolchain?.test_timeout ?? DEFAULT_TIMEOUT_S) * 1000;
  const capture = await OutputCapture.open(logPath);
  let result;
  try {
    const isolation = { policy: effectivePolicy(scope.config.coachgate.sandbox), loginShell };
    result = await runSandboxed(
      { argv, cwd, env: environment.env, timeoutMs, signal, isolation },
      capture,
    );
  } finally {
    await capture.close();
  }
  const output = await readHead(logPath);
  const summary = summarizeOutput(capture.excerpt(), 1200);
  const warning = result.sandbox.warning;
  return {
    outcome: { ...result, summary, ...(warning ? { sandbox_warning: warning } : {}) },
    output,
  };
}

/** The base's findings for this command, cached per base commit + command: the base never changes. */
async function baseFindings(
  scope: ToolchainScope,
  name: ToolchainGateName,
  command: string,
  signal?: AbortSignal,
): Promise<BaseFindings | undefined> {
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        scope.base.commit,
        name,
        command,
        scope.config.autobuild?.coach?.test_execution,
      ]),
    )
    .digest('hex')
    .slice(0, 24);
  // The server's copy is read; a Player who edits the worktree mirror cannot declare errors pre-existing.
  const cacheFile = await mirroredCacheFile(scope.worktree, 'gate', key);
  const cached = parseJsonRecord<BaseFindings>(cacheFile.mirror, await readStateCopy(cacheFile));
  if (cached.state === 'ok') return cached.value;
  const found = await withDetachedCheckout(scope.worktree, scope.base.commit, async (checkout) => {
    const { outcome, output } = await runConfiguredCommand(
      scope,
      checkout,
      command,
      path.join(path.dirname(checkout), `${name}.log`),
      signal,
    );
    if (outcome.timed_out || signal?.aborted) return undefined;
    const parsed: ParsedLint | undefined = parseLintOutput(output, checkout);
    return { commit: scope.base.commit, parsed, exit_code: outcome.exit_code };
  });
  if (found) await writeMirrored(cacheFile, `${JSON.stringify(found, null, 2)}\n`);
  return found;
}

async function readHead(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min((await handle.stat()).size, MAX_PARSED_BYTES));
    await handle.read(buffer, 0, buffer.length, 0);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}
