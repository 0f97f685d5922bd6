import { CallerError } from '../errors/errors.js';
import { findOnPath } from '../runner/platform.js';
import { runProcess, type ProcessOutcome, type ProcessSpec } from '../runner/execute.js';
import { withPriority } from '../runner/priority.js';
import type { RunPriority } from '../runner/run-queue.js';
import type { OutputCapture } from '../runner/output-capture.js';
import { detectSandbox, INSTALL_ADVICE, type BackendName } from './backend.js';
import { exposureFor, type SandboxRequest } from './exposure.js';
import type { NetworkMode, SandboxMode, SandboxPolicy } from '../config/sandbox-policy.js';
import type { BytecodeCache } from '../runner/bytecode-cache-types.js';

/**
 * How one process runs: confined by the policy, or — only for programs that are the user's own and
 * never the Player's (the Coach agent) — unsandboxed for a stated reason.
 */
export type Isolation =
  | {
      policy: SandboxPolicy;
      home?: SandboxRequest['home'];
      /** Writable paths besides the working directory. */
      writable?: string[];
      /**
       * Read-only again inside the writable paths: the driver's files in the Player's worktree, the
       * base's tests in a trusted snapshot (each a bind under bubblewrap: keep them few).
       */
      readOnly?: string[];
      /** Overrides the policy's network (the Player agent must reach its model API). */
      network?: NetworkMode;
      loginShell?: boolean;
      /**
       * Variables handed to the confined command on purpose, after coachgate's own secrets are
       * removed from the environment (the Player's one-run token for the driver's endpoint).
       */
      grant?: Record<string, string>;
      /** Python's bytecode from the server's cache: read-only, or written by the baseline. */
      bytecodeCache?: BytecodeCache;
    }
  | { unsandboxed: string; grant?: Record<string, string> };

/** The sandbox a run had: stored in run records, shown in tool results and the gate box. */
export interface SandboxInForce {
  backend: BackendName;
  mode: SandboxMode | 'unsandboxed';
  network: NetworkMode;
  /** Present whenever the run was not confined: said in every record, result and gate box. */
  warning?: string;
}

/** `sandbox.mode: required` on a machine without a working sandbox: nothing runs. */
export class SandboxUnavailableError extends CallerError {}

export interface SandboxedCommand {
  argv: string[];
  env: Record<string, string>;
  sandbox: SandboxInForce;
  /** As the backend's: nothing of the run outlives it (see {@link ProcessSpec}). */
  pidNamespace?: true;
}

/** The argv and environment that run `argv` in `cwd` under `isolation`. */
export async function sandboxedCommand(
  argv: string[],
  cwd: string,
  env: Record<string, string>,
  isolation: Isolation,
): Promise<SandboxedCommand> {
  if ('unsandboxed' in isolation) {
    return {
      argv,
      env: { ...env, ...isolation.grant },
      sandbox: { backend: 'none', mode: 'unsandboxed', network: 'host' },
    };
  }
  const { policy } = isolation;
  const network = isolation.network ?? policy.network;
  const backend = policy.mode === 'off' ? undefined : await detectSandbox();
  if (!backend?.command) {
    const why = backend
      ? `no working sandbox (${backend.reason})`
      : 'coachgate.sandbox.mode is off';
    if (policy.mode === 'required') {
      throw new SandboxUnavailableError(
        `Refusing to run: the base config (or --sandbox) requires a sandbox, and this machine has ${why}.`,
        INSTALL_ADVICE,
      );
    }
    const warning = `NOT SANDBOXED: ${why}. This code ran with the server's full authority (it could read the signing key and the state directory, and signal the server). ${policy.mode === 'off' ? 'Set coachgate.sandbox.mode to auto or required on the base branch.' : INSTALL_ADVICE}`;
    return {
      argv,
      env: { ...env, ...isolation.grant },
      sandbox: { backend: 'none', mode: policy.mode, network: 'host', warning },
    };
  }
  const bytecodeCache = bytecodeCacheFor(backend.name, isolation.bytecodeCache);
  const request: SandboxRequest = {
    cwd,
    writable: isolation.writable ?? [],
    network,
    home: isolation.home ?? 'toolchains',
    loginShell: isolation.loginShell ?? false,
    readOnly: isolation.readOnly ?? [],
    ...(bytecodeCache ? { bytecodeCache } : {}),
  };
  return {
    argv: backend.command(argv, request, exposureFor(request, env)),
    env: bytecodeCacheEnvironment(
      { ...withoutServerSecrets(env), ...isolation.grant },
      bytecodeCache,
    ),
    sandbox: { backend: backend.name, mode: policy.mode, network },
    ...(backend.pidNamespace ? { pidNamespace: true as const } : {}),
  };
}

/**
 * The cache a run is given: only under bubblewrap, whose read-only bind is what keeps runs of the
 * Player's code from writing it (macOS's profile has no such bind yet). Without it nothing changes.
 */
export function bytecodeCacheFor(
  backend: BackendName,
  cache: BytecodeCache | undefined,
): BytecodeCache | undefined {
  return backend === 'bubblewrap' ? cache : undefined;
}

/**
 * Python reads (and pytest reads its rewritten modules) from the cache alone. Only the filling run
 * may write bytecode, and with the prefix set it writes nowhere but the cache.
 */
function bytecodeCacheEnvironment(
  env: Record<string, string>,
  cache: BytecodeCache | undefined,
): Record<string, string> {
  if (!cache) return env;
  const { PYTHONDONTWRITEBYTECODE: dontWrite, ...rest } = env;
  return {
    ...rest,
    PYTHONPYCACHEPREFIX: cache.directory,
    ...(cache.writable || dontWrite === undefined ? {} : { PYTHONDONTWRITEBYTECODE: dontWrite }),
  };
}

/**
 * Every program started on worktree or snapshot code starts here: the command is confined (or refused,
 * or marked unsandboxed) and then run with the process-tree discipline of `runProcess`.
 */
export async function runSandboxed(
  spec: ProcessSpec & {
    isolation: Isolation;
    /** Background: the whole tree runs at a lower CPU priority (see src/runner/run-queue.ts). */
    priority?: RunPriority;
  },
  capture: OutputCapture,
): Promise<ProcessOutcome & { sandbox: SandboxInForce }> {
  // Inside the sandbox, where bubblewrap's session is the one to lower.
  const command = await sandboxedCommand(
    await withPriority(spec.argv, spec.priority),
    spec.cwd,
    spec.env,
    spec.isolation,
  );
  const [program] = spec.argv;
  // Inside bwrap (or behind `nice` and the lowering shell) a missing program is bwrap's own exit 1 or the
  // shell's 127; looked up first, it is the spawn error a direct start would give (`spawn pnpm
  // ENOENT`), which the failure classifier explains.
  if (
    command.argv !== spec.argv &&
    !program!.includes('/') &&
    !(await findOnPath(program!, spec.env))
  )
    return {
      exit_code: 127,
      signal: null,
      timed_out: false,
      cancelled: false,
      duration_ms: 0,
      spawn_error: `Command failed with ENOENT: ${spec.argv.join(' ')}\nspawn ${program} ENOENT`,
      sandbox: command.sandbox,
    };
  if (command.sandbox.warning) capture.write(`[coachgate] ${command.sandbox.warning}\n`);
  const outcome = await runProcess(
    { ...spec, argv: command.argv, env: command.env, pidNamespace: command.pidNamespace },
    capture,
  );
  return { ...outcome, sandbox: command.sandbox };
}

/** The user's environment minus what only the server may know: where its state is, its tokens. */
function withoutServerSecrets(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter(
      ([name]) =>
        !(
          name === 'COACHGATE_STATE_DIR' ||
          (name.startsWith('COACHGATE_') && /TOKEN|KEY|SECRET|PASSWORD/.test(name))
        ),
    ),
  );
}
