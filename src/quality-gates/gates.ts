import type { Config, GateName } from '../config/config.js';
import type { ReportedGates } from '../tasks/task-work-results.js';

export interface GateResult {
  name: GateName;
  required: boolean;
  passed: boolean;
  reason: string;
}

export interface GatesReport {
  tests_passed: boolean;
  coverage_met: boolean;
  arch_review_passed: boolean;
  plan_audit_passed: boolean;
  all_gates_passed: boolean;
  failed_gates: string[];
  gates: GateResult[];
  thresholds: { arch_review_min: number; coverage_min: number | null; required_gates: GateName[] };
}

/**
 * Evaluates every gate every time (no short-circuit: a failing coverage gate once hid a failing test run).
 * A gate is required when configured or when the Player reported it; a required gate with no signal fails.
 * `unreadable`: why a report that exists could not be read (corrupt JSON, wrong shape), given as the
 * reason of each required gate it would have fed, so a corrupt report never reads as a missing one.
 */
export function evaluateGates(
  reported: ReportedGates | undefined,
  config: Config,
  unreadable?: string,
): GatesReport {
  const settings = config.coachgate;
  const required = new Set<GateName>(settings.required_gates);
  if (settings.coverage_min !== undefined) required.add('coverage');
  const r = reported ?? {};
  const gates: GateResult[] = [
    testsGate(
      r,
      required.has('tests') ||
        r.tests_all_passed !== undefined ||
        r.tests_passed !== undefined ||
        r.tests_failed !== undefined,
    ),
    coverageGate(
      r,
      settings.coverage_min,
      required.has('coverage') || r.coverage_percent !== undefined || r.coverage_met !== undefined,
    ),
    archReviewGate(
      r,
      settings.arch_review_min,
      required.has('arch_review') || r.arch_review_score !== undefined,
    ),
    planAuditGate(r, required.has('plan_audit') || r.plan_audit_violations !== undefined),
  ].map((result) =>
    unreadable !== undefined && !result.passed ? { ...result, reason: unreadable } : result,
  );
  const failed = gates.filter((gate) => !gate.passed);
  const passed = (name: GateName) => gates.find((gate) => gate.name === name)!.passed;
  return {
    tests_passed: passed('tests'),
    coverage_met: passed('coverage'),
    arch_review_passed: passed('arch_review'),
    plan_audit_passed: passed('plan_audit'),
    all_gates_passed: failed.length === 0,
    failed_gates: failed.map((gate) => `${gate.name}: ${gate.reason}`),
    gates,
    thresholds: {
      arch_review_min: settings.arch_review_min,
      coverage_min: settings.coverage_min ?? null,
      required_gates: [...required].sort(),
    },
  };
}

function gate(name: GateName, required: boolean, passed: boolean, reason: string): GateResult {
  return {
    name,
    required,
    passed: required ? passed : true,
    reason: required ? reason : 'not required and not reported',
  };
}

function testsGate(r: ReportedGates, required: boolean): GateResult {
  if (
    r.tests_all_passed === undefined &&
    r.tests_passed === undefined &&
    r.tests_failed === undefined
  ) {
    return gate('tests', required, false, 'no test results reported');
  }
  const failed = r.tests_failed ?? 0;
  if (r.tests_all_passed === false || failed > 0)
    return gate('tests', required, false, `tests reported failing (${failed} failed)`);
  if (r.tests_all_passed === undefined && (r.tests_passed ?? 0) === 0)
    return gate('tests', required, false, 'zero passing tests reported');
  return gate('tests', required, true, 'reported passing');
}

function coverageGate(
  r: ReportedGates,
  minimum: number | undefined,
  required: boolean,
): GateResult {
  if (minimum !== undefined) {
    if (r.coverage_percent === undefined)
      return gate(
        'coverage',
        required,
        false,
        `coverage_min is ${minimum}% but no coverage percentage was reported`,
      );
    return gate(
      'coverage',
      required,
      r.coverage_percent >= minimum,
      `${r.coverage_percent}% against a minimum of ${minimum}%`,
    );
  }
  if (r.coverage_met === undefined)
    return gate('coverage', required, false, 'no coverage threshold result reported');
  return gate(
    'coverage',
    required,
    r.coverage_met,
    r.coverage_met ? 'threshold met' : 'threshold not met',
  );
}

function archReviewGate(r: ReportedGates, minimum: number, required: boolean): GateResult {
  if (r.arch_review_score === undefined)
    return gate('arch_review', required, false, 'no architectural review score reported');
  return gate(
    'arch_review',
    required,
    r.arch_review_score >= minimum,
    `score ${r.arch_review_score} against a minimum of ${minimum}`,
  );
}

function planAuditGate(r: ReportedGates, required: boolean): GateResult {
  if (r.plan_audit_violations === undefined)
    return gate('plan_audit', required, false, 'no plan audit reported');
  return gate(
    'plan_audit',
    required,
    r.plan_audit_violations === 0,
    `${r.plan_audit_violations} plan audit violation(s)`,
  );
}
