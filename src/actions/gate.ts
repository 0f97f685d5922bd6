import type { GateCheck } from '../core/gate-report.js';
import { gateChecks } from './gate-checks.js';
import type { TaskScope } from './task-scope.js';
import { taskStatus } from './task-status.js';

export interface GateDecision {
  pass: boolean;
  status: string;
  reasons: string[];
  task: Awaited<ReturnType<typeof taskStatus>>;
  /** Graph health, build, typecheck and lint on the current tree (gate-checks.ts). */
  checks: GateCheck[];
}

/**
 * For hooks and CI: a task passes only when its recorded verdict is an approval, the verdict history is
 * intact, and the tree is still the one the approving run tested (nothing changed after approval).
 */
export async function gateDecision(scope: TaskScope): Promise<GateDecision> {
  const status = await taskStatus(scope);
  const reasons: string[] = [];
  if (status.status !== 'approved') reasons.push(`task is ${status.status}${status.block_reason ? ` (${status.block_reason})` : ''}, not approved`);
  if (!status.verdict_chain.intact) reasons.push(`verdicts.jsonl is damaged: ${status.verdict_chain.problems.join('; ')}`);
  const run = status.latest_run;
  if (!run) reasons.push('no independent test run is stored');
  else if ('problem' in run) reasons.push(`the latest run is unreadable: ${run.problem}`);
  else {
    if (run.status !== 'passed') reasons.push(`the latest run ${run.run_id} has status ${run.status}`);
    if (!run.fresh) reasons.push(`the worktree changed after run ${run.run_id}: the approval no longer describes the code`);
  }
  const checks = await gateChecks(scope);
  reasons.push(...checks.filter((check) => !check.passed).map((check) => `${check.name}: ${check.reason}`));
  return { pass: reasons.length === 0, status: status.status, reasons, task: status, checks };
}
