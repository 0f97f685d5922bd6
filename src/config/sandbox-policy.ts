/**
 * The sandbox policy's vocabulary, read from the base config (`coachgate.sandbox`). Where the policy
 * is applied: src/sandbox/.
 */
export const SANDBOX_MODES = ['off', 'auto', 'required'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

export const NETWORK_MODES = ['none', 'loopback', 'host'] as const;
export type NetworkMode = (typeof NETWORK_MODES)[number];

export interface SandboxPolicy {
  mode: SandboxMode;
  network: NetworkMode;
}

/** What a careful user wants by default: sandboxed wherever a sandbox works, loudly not elsewhere. */
export const DEFAULT_SANDBOX_POLICY: SandboxPolicy = { mode: 'auto', network: 'none' };

/** The stricter of two modes (`required` > `auto` > `off`). */
export function stricterMode(a: SandboxMode, b: SandboxMode): SandboxMode {
  return SANDBOX_MODES.indexOf(a) >= SANDBOX_MODES.indexOf(b) ? a : b;
}

/**
 * The sandbox a run had, in one line for records, tool results and the gate box: the backend and its
 * network, or `NOT SANDBOXED: why`.
 */
export function describeSandbox(sandbox: {
  backend: string;
  network: NetworkMode;
  warning?: string;
}): string {
  if (sandbox.warning) return sandbox.warning.split(/\.(?:\s|$)/, 1)[0]!;
  if (sandbox.backend === 'none') return "NOT SANDBOXED: the user's own command";
  return `${sandbox.backend}, network ${sandbox.network}`;
}
