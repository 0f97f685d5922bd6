import type { GateCheck, GateReport, GateRow } from './gate-render.js';
import { readVerdictLog } from '../records/verdict-log.js';
import { describeSandbox } from '../config/sandbox-policy.js';
import { gateDecision, type ApprovalTerms, type GateDecision } from './gate.js';
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
    status: decision.approval?.merged ? 'merged_approved' : decision.verdicts.status,
    strikes: decision.verdicts.strikes,
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

/** The verdict history the gate verified: the state copy, or the committed mirror on a fresh clone. */
function verdictRow({ verdicts, task }: GateDecision): GateRow {
  const untrusted = verdicts.untrusted_keys.length > 0;
  const chain = untrusted
    ? `; signed by key ${verdicts.untrusted_keys.join(', ')}, not trusted here (coachgate.trusted_keys)`
    : verdicts.intact
      ? ''
      : '; verdicts.jsonl is damaged';
  const status = verdicts.status === 'approved' ? 'APPROVED' : verdicts.status;
  return {
    label: 'Verdict',
    state: verdicts.status === 'approved' && verdicts.intact ? 'pass' : 'fail',
    detail: `${status} (${verdicts.last_turn} turn(s), ${verdicts.strikes}/${task.max_strikes} strikes${chain})`,
    details: [],
  };
}

/**
 * With an approval, the approving run the gate checked (it may live only in the committed mirror);
 * before one, the task's latest run.
 */
function testsRow({ task, approval, approving_run }: GateDecision): GateRow {
  if (approval && approving_run) return approvedRunRow(approval, approving_run);
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
  return {
    label: 'Tests',
    state: run.status === 'passed' && run.fresh ? 'pass' : 'fail',
    detail: `${run.status}: ${counts} (${run.run_id}, ${run.fresh ? 'current tree' : 'STALE: the tree changed since this run'})`,
    details: sandboxDetails(run),
  };
}

function approvedRunRow(
  approval: ApprovalTerms,
  { record: run, fresh: current }: NonNullable<GateDecision['approving_run']>,
): GateRow {
  const counts = `${run.counts.passed} passed, ${run.counts.failed} failed, ${run.counts.errors} errors`;
  const { merged } = approval;
  // After the merge the run describes the approved files, which the gate compared one by one.
  const tree = !merged
    ? current
      ? 'current tree'
      : 'STALE: the tree changed since this run'
    : merged.changed_files.length === 0
      ? `approved tree, merged in ${merged.merge_commit.slice(0, 12)}; the ${merged.approved_files} approved file(s) unchanged (signed merged.json)`
      : `merged in ${merged.merge_commit.slice(0, 12)}, but ${merged.changed_files.length} approved file(s) changed since`;
  const fresh = merged ? merged.changed_files.length === 0 : current;
  // The approval guard's rule: failures the base already had do not fail the tests.
  const preexisting = approval.run_preexisting_only;
  return {
    label: 'Tests',
    state: (run.status === 'passed' || preexisting) && fresh ? 'pass' : 'fail',
    detail: `${run.status}: ${counts} (${run.run_id}, ${tree})${preexisting ? '; every failure is pre-existing (fails at the base too)' : ''}`,
    details: run.sandbox
      ? sandboxDetails({
          sandbox: describeSandbox(run.sandbox),
          ...(run.sandbox.warning ? { sandbox_warning: run.sandbox.warning } : {}),
        })
      : [],
  };
}

function sandboxDetails(run: { sandbox_warning?: string; sandbox?: string }): string[] {
  return run.sandbox_warning
    ? [run.sandbox_warning]
    : run.sandbox
      ? [`sandbox: ${run.sandbox}`]
      : [];
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
