import type { GateCheck, GateReport, GateRow } from '../core/gate-report.js';
import { readVerdictLog } from '../records/verdict-log.js';
import { gateDecision, type GateDecision } from './gate.js';
import type { TaskScope } from './task-scope.js';

const LABELS: Record<GateCheck['name'], string> = {
  graph: 'Graph health',
  build: 'Build',
  typecheck: 'Type check',
  lint: 'Lint',
};

/** The gate decision laid out for display: verdict, graph health, build, typecheck, tests, lint. */
export async function gateReport(scope: TaskScope): Promise<GateReport> {
  const decision = await gateDecision(scope);
  const { task } = decision;
  const check = (name: GateCheck['name']): GateRow => {
    const found = decision.checks.find((item) => item.name === name);
    return found
      ? {
          label: LABELS[name],
          state: found.passed ? 'pass' : 'fail',
          detail: found.reason,
          details: found.details,
        }
      : {
          label: LABELS[name],
          state: 'skip',
          detail: `not configured (toolchain.${name})`,
          details: [],
        };
  };
  const rows = [
    verdictRow(decision),
    check('graph'),
    check('build'),
    check('typecheck'),
    testsRow(decision),
    check('lint'),
  ].filter((row) => !(row.label === LABELS.typecheck && row.state === 'skip'));
  const report: GateReport = {
    task_id: scope.taskId,
    title: task.title,
    passed: decision.pass,
    status: task.status,
    strikes: task.strikes,
    max_strikes: task.max_strikes,
    rows,
    reasons: decision.reasons,
    verified_with: decision.verified_with,
    acknowledged_changes: decision.approval?.acknowledged_changes ?? [],
    preexisting_failures: decision.approval?.preexisting_failures ?? [],
  };
  if (task.status === 'blocked')
    report.blocked = await blockedInfo(scope, task.block_reason ?? 'blocked');
  return report;
}

function verdictRow({ task }: GateDecision): GateRow {
  const chain = task.verdict_chain.intact ? '' : '; verdicts.jsonl is damaged';
  const detail = `${task.status === 'approved' ? 'APPROVED' : task.status} (${task.turns.length} turn(s), ${task.strikes}/${task.max_strikes} strikes${chain})`;
  return {
    label: 'Verdict',
    state: task.status === 'approved' && task.verdict_chain.intact ? 'pass' : 'fail',
    detail,
    details: [],
  };
}

function testsRow({ task, approval }: GateDecision): GateRow {
  const run = task.latest_run;
  if (!run)
    return { label: 'Tests', state: 'fail', detail: 'no independent test run stored', details: [] };
  if ('problem' in run)
    return {
      label: 'Tests',
      state: 'fail',
      detail: `latest run unreadable: ${run.problem}`,
      details: [],
    };
  const counts = `${run.counts.passed} passed, ${run.counts.failed} failed, ${run.counts.errors} errors`;
  // After the merge the run describes the approved files, which the gate compared one by one.
  const merged =
    approval?.run_id === run.run_id && approval.merged?.changed_files.length === 0
      ? approval.merged
      : null;
  const fresh = run.fresh
    ? 'current tree'
    : merged
      ? `approved tree, merged in ${merged.merge_commit.slice(0, 12)}`
      : 'STALE: the tree changed since this run';
  // The approval guard's rule: failures the base already had do not fail the tests.
  const preexistingOnly = approval?.run_id === run.run_id && approval.run_preexisting_only;
  return {
    label: 'Tests',
    state: (run.status === 'passed' || preexistingOnly) && (run.fresh || merged) ? 'pass' : 'fail',
    detail: `${run.status}: ${counts} (${run.run_id}, ${fresh})${preexistingOnly ? '; every failure is pre-existing (fails at the base too)' : ''}`,
    details: run.sandbox_warning
      ? [run.sandbox_warning]
      : run.sandbox
        ? [`sandbox: ${run.sandbox}`]
        : [],
  };
}

/** The failure pattern: one line per Coach decision, as review.md lists it. */
async function blockedInfo(
  scope: TaskScope,
  reason: string,
): Promise<NonNullable<GateReport['blocked']>> {
  const log = await readVerdictLog(scope.worktree, scope.taskId);
  const pattern = log.entries
    .filter((entry) => entry.kind === 'verdict')
    .map((entry) => {
      const mustFix = entry.issues
        .filter((issue) => issue.severity === 'must_fix')
        .map((issue) => issue.description);
      return `Turn ${entry.turn}: ${entry.decision} — ${(mustFix.length > 0 ? mustFix.join('; ') : entry.rationale).split('\n')[0]}`;
    });
  return {
    reason,
    failure_pattern: pattern,
    recommendation:
      'Stop the loop and escalate to a human: clarify the acceptance criteria, split the task, or fix the environment before another attempt.',
  };
}
