import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { bubblewrapArgs } from './bubblewrap.js';
import type { Exposure, SandboxRequest } from './exposure.js';
import { seatbeltArgs } from './seatbelt.js';

const run = promisify(execFile);

export type BackendName = 'bubblewrap' | 'sandbox-exec' | 'none';

/**
 * One way to confine a process. A container backend (an OCI image run by podman or docker) would be a
 * third implementation of `command`; see docs/sandbox.md.
 */
export interface SandboxBackend {
  name: BackendName;
  /** Why this backend is in force, or why there is none (with how to get one). */
  reason: string;
  /** The argv that runs `argv` confined; undefined for `none`. */
  command?: (argv: string[], request: SandboxRequest, exposure: Exposure) => string[];
  /**
   * The command is the child of a PID namespace's init: by the time it has exited, the kernel has
   * killed every process left in the namespace, double-forked daemons included.
   */
  pidNamespace?: true;
}

export const INSTALL_ADVICE =
  process.platform === 'darwin'
    ? 'sandbox-exec ships with macOS (/usr/bin/sandbox-exec); check that it runs.'
    : process.platform === 'linux'
      ? 'Install bubblewrap (Debian/Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap). In a container, bubblewrap also needs user namespaces (docker run --security-opt seccomp=unconfined, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04).'
      : `coachgate has no sandbox for ${process.platform}; run the server on Linux or macOS, or set coachgate.sandbox.mode: auto to run unsandboxed.`;

let detected: Promise<SandboxBackend> | undefined;

/**
 * The working sandbox on this machine, probed once for real: bwrap can be installed and still fail
 * (containers without user namespaces), so a program found is not a program that works.
 */
export function detectSandbox(): Promise<SandboxBackend> {
  detected ??= probe();
  return detected;
}

/** Tests switch the environment between detections. */
export function forgetSandboxDetection(): void {
  detected = undefined;
}

async function probe(): Promise<SandboxBackend> {
  if (process.platform === 'linux') return probeBubblewrap();
  if (process.platform === 'darwin') return probeSeatbelt();
  return { name: 'none', reason: `no sandbox exists for ${process.platform}` };
}

async function probeBubblewrap(): Promise<SandboxBackend> {
  // Resolved from the server's own PATH now, never from a run's PATH (a worktree's node_modules/.bin
  // could hold a fake bwrap). $COACHGATE_BWRAP names another one.
  const bwrap = process.env.COACHGATE_BWRAP ?? findProgram('bwrap');
  if (!bwrap) return { name: 'none', reason: 'bubblewrap (bwrap) is not installed' };
  const failure = await run(bwrap, [
    ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'],
    ...['--unshare-pid', '--unshare-net', '--die-with-parent', '--cap-drop', 'ALL', 'true'],
  ]).then(
    () => undefined,
    (error: NodeJS.ErrnoException & { stderr?: string }) =>
      (error.stderr?.trim() || error.message).split('\n')[0],
  );
  if (failure?.includes('ENOENT')) return { name: 'none', reason: `${bwrap} does not exist` };
  if (failure) return { name: 'none', reason: `${bwrap} is installed but fails here: ${failure}` };
  return {
    name: 'bubblewrap',
    reason: `${bwrap} works (own PID, IPC and network namespaces)`,
    command: (argv, request, exposure) => bubblewrapArgs(bwrap, argv, request, exposure),
    pidNamespace: true,
  };
}

async function probeSeatbelt(): Promise<SandboxBackend> {
  const sandboxExec = '/usr/bin/sandbox-exec';
  const failure = await run(sandboxExec, [
    '-p',
    '(version 1)(allow default)',
    '/usr/bin/true',
  ]).then(
    () => undefined,
    (error: Error) => error.message.split('\n')[0],
  );
  if (failure) return { name: 'none', reason: `sandbox-exec fails here: ${failure}` };
  return {
    name: 'sandbox-exec',
    reason: `${sandboxExec} works (Seatbelt profile; no PID namespace on macOS)`,
    command: (argv, request, exposure) => seatbeltArgs(sandboxExec, argv, request, exposure),
  };
}

function findProgram(name: string): string | undefined {
  const directories = (process.env.PATH ?? '').split(path.delimiter).filter(path.isAbsolute);
  for (const directory of ['/usr/bin', '/bin', '/usr/local/bin', ...directories]) {
    const candidate = path.join(directory, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
