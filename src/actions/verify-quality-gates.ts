import { evaluateGates, type GatesReport } from '../core/gates.js';
import { readTaskWorkResults, type TaskWorkResultsReport } from './read-task-work-results.js';
import type { TaskScope } from './task-scope.js';

export interface QualityGatesReport extends GatesReport {
  report_path: string | null;
  problems: string[];
  warnings: string[];
}

/** Every gate, every time, against thresholds from the trusted (base-commit) configuration. */
export async function verifyQualityGates(scope: TaskScope, known?: TaskWorkResultsReport): Promise<QualityGatesReport> {
  const report = known ?? (await readTaskWorkResults(scope.worktree, scope.taskId));
  const gates = evaluateGates(report.results ? report.reported_gates : undefined, scope.config);
  const problems = report.results ? report.problems : [report.message, ...report.problems];
  return { ...gates, report_path: report.found ? report.path : null, problems, warnings: scope.warnings };
}
