import { evaluateGates, type GatesReport } from '../core/gates.js';
import { readTaskWorkResults } from './read-task-work-results.js';
import { openTask } from './task-scope.js';

export interface QualityGatesReport extends GatesReport {
  report_path: string | null;
  problems: string[];
  warnings: string[];
}

/** Every gate, every time, against thresholds from the trusted (base-commit) configuration. */
export async function verifyQualityGates(worktree: string, taskId: string, baseRef?: string): Promise<QualityGatesReport> {
  const scope = await openTask(worktree, taskId, baseRef);
  const report = await readTaskWorkResults(worktree, taskId);
  const gates = evaluateGates(report.results ? report.reported_gates : undefined, scope.config);
  const problems = report.results ? report.problems : [report.message, ...report.problems];
  return { ...gates, report_path: report.found ? report.path : null, problems, warnings: scope.warnings };
}
