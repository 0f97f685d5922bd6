import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/config.js';
import { evaluateGates } from '../../src/quality-gates/gates.js';

const config = (yaml = '') => parseConfig(yaml).config;

describe('evaluateGates', () => {
  it('fails the tests gate when nothing was reported (no signal is not a pass)', () => {
    const report = evaluateGates(undefined, config());
    expect(report.tests_passed).toBe(false);
    expect(report.all_gates_passed).toBe(false);
    expect(report.failed_gates).toEqual(['tests: no test results reported']);
  });

  it('evaluates every gate without short-circuiting on the first failure', () => {
    const report = evaluateGates(
      {
        tests_all_passed: false,
        tests_failed: 2,
        coverage_met: false,
        arch_review_score: 40,
        plan_audit_violations: 1,
      },
      config(),
    );
    expect(report.failed_gates).toHaveLength(4);
    expect(report.failed_gates.map((gate) => gate.split(':')[0])).toEqual([
      'tests',
      'coverage',
      'arch_review',
      'plan_audit',
    ]);
  });

  it('passes arch review at the configured minimum and requires configured coverage', () => {
    const yaml = 'coachgate:\n  arch_review_min: 70\n  coverage_min: 80\n';
    expect(
      evaluateGates(
        { tests_passed: 3, tests_failed: 0, arch_review_score: 70, coverage_percent: 80 },
        config(yaml),
      ).all_gates_passed,
    ).toBe(true);
    const missingCoverage = evaluateGates({ tests_passed: 3, tests_failed: 0 }, config(yaml));
    expect(missingCoverage.coverage_met).toBe(false);
    expect(missingCoverage.failed_gates[0]).toMatch(/coverage_min is 80%/);
  });

  it('does not count zero passing tests as passing', () => {
    expect(evaluateGates({ tests_passed: 0, tests_failed: 0 }, config()).tests_passed).toBe(false);
  });
});
