import { evaluateGates, type GatesReport } from '../quality-gates/gates.js';
import type { ToolchainGateResult } from '../quality-gates/toolchain-rules.js';
import { readTaskWorkResults, type TaskWorkResultsReport } from './read-task-work-results.js';
import type { TaskScope } from './task-scope.js';
import { runToolchainGates } from '../quality-gates/toolchain-gates.js';

export interface QualityGatesReport extends GatesReport {
  /** Build, typecheck and lint, run by the server itself when the base config names their commands. */
  toolchain_gates: ToolchainGateResult[];
  report_path: string | null;
  problems: string[];
  warnings: string[];
}

/**
 * Every gate, every time, against thresholds from the trusted (base-commit) configuration: the Player's
 * reported gates plus the toolchain commands the server runs. `all_gates_passed` covers both, so the
 * approval guard refuses a broken build or a new lint error.
 */
export async function verifyQualityGates(
  scope: TaskScope,
  known?: TaskWorkResultsReport,
  signal?: AbortSignal,
): Promise<QualityGatesReport> {
  const report = known ?? (await readTaskWorkResults(scope.worktree, scope.taskId));
  const gates = report.results
    ? evaluateGates(report.reported_gates, scope.config)
    : // The message is a sentence; a gate's reason is a clause the summary punctuates.
      evaluateGates(
        undefined,
        scope.config,
        report.found ? report.message.replace(/\.$/, '') : undefined,
      );
  const toolchain = await runToolchainGates(scope, signal);
  const failedToolchain = toolchain
    .filter((gate) => !gate.passed)
    .map((gate) => `${gate.name}: ${gate.reason}`);
  const problems = report.results ? report.problems : [report.message, ...report.problems];
  return {
    ...gates,
    all_gates_passed: gates.all_gates_passed && failedToolchain.length === 0,
    failed_gates: [...gates.failed_gates, ...failedToolchain],
    toolchain_gates: toolchain,
    report_path: report.found ? report.path : null,
    problems,
    warnings: scope.warnings,
  };
}
