import type { GatesReport } from './gates.js';
import type { RunRecord } from './run-record.js';

/** Everything the guard re-evaluates server-side at the moment an approval is requested. */
export interface ApprovalFacts {
  task_status: 'approved' | 'in_progress' | 'blocked';
  run: { state: 'missing' } | { state: 'corrupt'; problem: string } | { state: 'ok'; value: Pick<RunRecord, 'run_id' | 'status' | 'tree_hash' | 'tree_clean' | 'failure_class' | 'counts'> };
  current_tree_hash: string;
  gates: Pick<GatesReport, 'all_gates_passed' | 'failed_gates'>;
  requirements: { criteria_total: number; all_criteria_met: boolean; missing: string[]; criteria: { id: string; status: string; evidence: { valid: boolean; problem?: string }[] }[] };
  verdict_issues: { severity: string; description: string; location?: string }[];
  integrity: { severity: string; kind: string; file: string; line?: number; detail: string }[];
  honesty: { verified: boolean; missing_files: string[] } | null;
}

/**
 * Why an approval must be refused; empty means the server's own evidence supports it. Each reason names the
 * check that failed and what to do about it. Every check runs, so the Coach sees all problems at once.
 */
export function approvalRefusals(facts: ApprovalFacts): string[] {
  const reasons: string[] = [];
  if (facts.task_status === 'blocked') reasons.push('task is blocked (strikes exhausted or loop stalled): escalate to a human instead of approving.');
  if (facts.task_status === 'approved') reasons.push('task is already approved: nothing more to approve.');
  reasons.push(...runReasons(facts));
  if (!facts.gates.all_gates_passed) reasons.push(`quality gates failed: ${facts.gates.failed_gates.join('; ')}. Ask the Player to fix them and report again.`);
  if (facts.honesty && !facts.honesty.verified) {
    reasons.push(`the Player's report claims files that do not exist: ${facts.honesty.missing_files.join(', ') || 'see read_task_work_results problems'}. Send feedback.`);
  }
  reasons.push(...requirementReasons(facts.requirements));
  const mustFix = facts.verdict_issues.filter((issue) => issue.severity === 'must_fix');
  if (mustFix.length > 0) {
    reasons.push(`the verdict itself lists ${mustFix.length} must_fix issue(s) (${mustFix.map((issue) => issue.description).join('; ')}): send decision "feedback" instead.`);
  }
  for (const finding of facts.integrity.filter((item) => item.severity === 'must_fix')) {
    reasons.push(`test integrity: ${finding.kind} in ${finding.file}${finding.line ? `:${finding.line}` : ''} — ${finding.detail}. Send feedback to undo it.`);
  }
  return reasons;
}

function runReasons(facts: ApprovalFacts): string[] {
  const { run } = facts;
  if (run.state === 'missing') return ['no independent test run is stored for this task: call run_independent_tests with this task_id first.'];
  if (run.state === 'corrupt') return [`the latest stored test run is unreadable (${run.problem}): run run_independent_tests again.`];
  const reasons: string[] = [];
  const { value } = run;
  if (value.status !== 'passed') {
    reasons.push(`latest test run ${value.run_id} has status "${value.status}" (${value.counts.failed} failed, ${value.counts.errors} errors, failure class ${value.failure_class}): tests must pass before approval.`);
  }
  if (value.tree_hash !== facts.current_tree_hash) {
    reasons.push(
      value.tree_clean
        ? `the worktree changed after test run ${value.run_id}: the run no longer describes the code. Call run_independent_tests again.`
        : `test run ${value.run_id} changed the worktree itself (tree_clean: false), so it does not describe the current code: make the tests stop writing into the tree, then run them again.`,
    );
  }
  return reasons;
}

function requirementReasons(requirements: ApprovalFacts['requirements']): string[] {
  if (requirements.criteria_total === 0) return ['the task has no acceptance criteria to verify: add a "## Acceptance Criteria" checklist to the task on the base branch.'];
  if (requirements.all_criteria_met) return [];
  const unmet = new Set(requirements.missing);
  return requirements.criteria
    .filter((criterion) => unmet.has(criterion.id))
    .map((criterion) => {
      const problems = criterion.evidence.filter((item) => !item.valid).map((item) => item.problem).filter(Boolean);
      const why = criterion.status === 'missing' ? 'not claimed and no evidence' : problems.length > 0 ? 'evidence does not hold' : 'claimed without evidence';
      return `criterion ${criterion.id} is not verified (${why}${problems.length ? `: ${problems.join('; ')}` : ''}): pass evidence (file + line + snippet, or a test that passed in the latest run).`;
    });
}
