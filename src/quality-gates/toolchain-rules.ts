import {
  describeFinding,
  newFindings,
  type LintFinding,
  type ParsedLint,
} from './lint-findings.js';

export type ToolchainGateName = 'build' | 'typecheck' | 'lint';
export const TOOLCHAIN_GATES: ToolchainGateName[] = ['build', 'typecheck', 'lint'];

/** What one run of a configured command did, as the runner reports it. */
export interface CommandOutcome {
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  spawn_error?: string;
  summary: string;
  /** Present when the command ran unsandboxed (docs/sandbox.md). */
  sandbox_warning?: string;
}

export interface ToolchainGateResult {
  name: ToolchainGateName;
  command: string;
  passed: boolean;
  reason: string;
  exit_code: number | null;
  duration_ms: number;
  /** Lint/typecheck only: how findings were read, or "exit code" when the output was not recognised. */
  judged_by: string;
  new_errors: string[];
  preexisting_errors: number;
  summary: string;
  sandbox_warning?: string;
}

/** The base's side of a "no new errors" comparison; absent when the base could not be checked. */
export interface BaseFindings {
  commit: string;
  parsed: ParsedLint | undefined;
  exit_code: number | null;
}

const SHOWN_ERRORS = 20;

/** Build passes on exit 0 only; a timeout or a command that cannot start fails with its cause. */
export function buildGate(
  name: ToolchainGateName,
  command: string,
  outcome: CommandOutcome,
): ToolchainGateResult {
  const passed = outcome.exit_code === 0 && !outcome.timed_out;
  return {
    ...common(name, command, outcome),
    passed,
    reason: passed ? `exit 0 in ${seconds(outcome)}` : failure(outcome),
    judged_by: 'exit code',
    new_errors: [],
    preexisting_errors: 0,
  };
}

/**
 * Lint and type checks pass when the current tree has no error the base did not already have. When either
 * side's output is unrecognised, the exit code decides (non-zero fails), since nothing can be compared.
 */
export function findingsGate(
  name: ToolchainGateName,
  command: string,
  outcome: CommandOutcome,
  current: ParsedLint | undefined,
  base: BaseFindings | undefined,
): ToolchainGateResult {
  const shared = common(name, command, outcome);
  if (outcome.timed_out || outcome.spawn_error)
    return {
      ...shared,
      passed: false,
      reason: failure(outcome),
      judged_by: 'exit code',
      new_errors: [],
      preexisting_errors: 0,
    };
  const comparable = current && (outcome.exit_code === 0 || current.findings.length > 0);
  if (!comparable) {
    const passed = outcome.exit_code === 0;
    return {
      ...shared,
      passed,
      reason: passed
        ? `exit 0 in ${seconds(outcome)}`
        : `${failure(outcome)}; output not in a recognised format, so every error counts`,
      judged_by: 'exit code',
      new_errors: [],
      preexisting_errors: 0,
    };
  }
  const baseFindings: LintFinding[] = base?.parsed?.findings ?? [];
  const added = newFindings(current.findings, baseFindings);
  const preexisting = current.findings.length - added.length;
  const passed = added.length === 0;
  const against = base ? `base ${base.commit.slice(0, 12)}` : 'an empty base';
  const reason = passed
    ? `no new errors against ${against}${preexisting ? ` (${preexisting} pre-existing)` : ''}`
    : `${added.length} new error(s) against ${against}${preexisting ? ` (${preexisting} pre-existing)` : ''}: ${added.slice(0, 3).map(describeFinding).join('; ')}`;
  return {
    ...shared,
    passed,
    reason,
    judged_by: current.format,
    new_errors: added.slice(0, SHOWN_ERRORS).map(describeFinding),
    preexisting_errors: preexisting,
  };
}

function common(name: ToolchainGateName, command: string, outcome: CommandOutcome) {
  return {
    name,
    command,
    exit_code: outcome.exit_code,
    duration_ms: outcome.duration_ms,
    summary: outcome.summary,
    ...(outcome.sandbox_warning ? { sandbox_warning: outcome.sandbox_warning } : {}),
  };
}

function failure(outcome: CommandOutcome): string {
  if (outcome.spawn_error) return `could not start: ${outcome.spawn_error}`;
  if (outcome.timed_out) return `timed out after ${seconds(outcome)}`;
  return `exit ${outcome.exit_code ?? 'killed'} in ${seconds(outcome)}`;
}

function seconds(outcome: CommandOutcome): string {
  return `${(outcome.duration_ms / 1000).toFixed(1)} s`;
}
