import {
  DEFAULT_SANDBOX_POLICY,
  SANDBOX_MODES,
  stricterMode,
  type SandboxMode,
  type SandboxPolicy,
} from '../config/sandbox-policy.js';

let floor: SandboxMode = 'off';

/** `--sandbox MODE` on the command line: the least the server accepts, whatever the base says. */
export function requireSandboxAtLeast(mode: SandboxMode): void {
  floor = mode;
}

/** The base config's policy (`coachgate.sandbox`), made stricter by the server's floor. */
export function effectivePolicy(configured: Partial<SandboxPolicy> | undefined): SandboxPolicy {
  return {
    mode: stricterMode(configured?.mode ?? DEFAULT_SANDBOX_POLICY.mode, floor),
    network: configured?.network ?? DEFAULT_SANDBOX_POLICY.network,
  };
}

export function parseSandboxMode(value: string | undefined): SandboxMode {
  if ((SANDBOX_MODES as readonly string[]).includes(value ?? '')) return value as SandboxMode;
  throw new Error(
    `--sandbox must be one of ${SANDBOX_MODES.join(', ')}, not ${JSON.stringify(value)}`,
  );
}
