import { describe, expect, it } from 'vitest';
import {
  approvalRefusals,
  type ApprovalFacts,
  type EvaluationFacts,
} from '../../src/verdicts/approval-guard.js';

/** The guard reads one evaluation result; these pin how it turns the trusted runs into reasons. */
const TREE = 'a'.repeat(64);
function facts(
  evaluation: Partial<EvaluationFacts> | null,
  extra: Partial<ApprovalFacts> = {},
): ApprovalFacts {
  return {
    task_status: 'in_progress',
    run: {
      state: 'ok',
      value: {
        run_id: 'r1',
        status: 'passed',
        tree_hash: TREE,
        tree_clean: true,
        failure_class: 'none',
        counts: { total: 2, passed: 2, failed: 0, errors: 0, skipped: 0 },
        tests: [],
      },
    },
    current_tree_hash: TREE,
    gates: { all_gates_passed: true, failed_gates: [] },
    requirements: { criteria_total: 1, all_criteria_met: true, missing: [], criteria: [] },
    verdict_issues: [],
    integrity: [],
    honesty: null,
    evaluation: evaluation && {
      trusted: { status: 'passed' },
      planted: [],
      regressions: [],
      uncollected_test_files: [],
      preexisting_failures: [],
      left_out: [],
      diverging_new_tests: [],
      ...evaluation,
    },
    acknowledged_changes: [],
    links_into_store: [],
    ...extra,
  };
}

describe('approvalRefusals with a trusted evaluation', () => {
  it('refuses a null turn unless the Coach acknowledges that the base does the task', () => {
    const nullTurn = {
      null_turn: true,
      left_out: [{ file: 'data/words.txt', change: 'modified' as const }],
    };
    const [reason, ...others] = approvalRefusals(facts(nullTurn));
    expect(others).toEqual([]);
    expect(reason).toMatch(
      /^null turn: .*acknowledged_null_turn .*left out \(data\/words\.txt\).*acknowledged_left_out/,
    );
    const acknowledged = { acknowledged_null_turn: { criterion: 'AC-001' } };
    expect(approvalRefusals(facts(nullTurn, acknowledged))).toEqual([]);
    expect(approvalRefusals(facts({ null_turn: false }))).toEqual([]);
  });

  it('names the test, the run and the fix for a PASS_TO_PASS failure', () => {
    const [reason] = approvalRefusals(
      facts({
        regressions: [{ test: 't.py::test_add', outcome: 'failed', message: 'assert -1 == 5' }],
      }),
    );
    expect(reason).toMatch(
      /base test t\.py::test_add passed at the base but failed in the trusted run .*assert -1 == 5.*acknowledged_changes/,
    );
  });

  it('lets an acknowledgement cover a failed base test but never a test that did not run', () => {
    const acknowledged_changes = [
      { test: 'test_add', criterion: 'AC-1', reason: 'spec' },
      { test: 'test_gone', criterion: 'AC-1', reason: 'spec' },
    ];
    const reasons = approvalRefusals(
      facts(
        {
          regressions: [
            { test: 't.py::test_add', outcome: 'failed' },
            { test: 't.py::test_gone', outcome: 'missing' },
          ],
        },
        { acknowledged_changes },
      ),
    );
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toMatch(
      /t\.py::test_gone .* did not run .*cannot cover a test that did not run/,
    );
  });

  it('gives tests that did not run for one cause one reason, with the cause', () => {
    const cause = "tests/test_x.py did not load: ImportError: cannot import name 'b' from 'm'";
    const reasons = approvalRefusals(
      facts({
        regressions: ['test_a', 'test_b', 'test_c', 'test_d'].map((name) => ({
          test: `tests/test_x.py::${name}`,
          outcome: 'missing' as const,
          message: cause,
        })),
      }),
    );
    expect(reasons).toEqual([
      `4 base tests tests/test_x.py::test_a, tests/test_x.py::test_b, tests/test_x.py::test_c, … passed at the base but did not run in the trusted run (base tests and config on your code): ${cause}. Your code must keep what the base's tests use; an acknowledgement cannot cover a test that did not run.`,
    ]);
  });

  it('accepts a red candidate run whose only failures are pre-existing, not a new one', () => {
    const red = (failing: string[], status: 'failed' | 'error' = 'failed') => ({
      run: {
        state: 'ok' as const,
        value: {
          run_id: 'r1',
          status,
          tree_hash: TREE,
          tree_clean: true,
          failure_class: 'code' as const,
          counts: { total: 2, passed: 1, failed: 1, errors: 0, skipped: 0 },
          tests: failing.map((id) => ({ id, status: 'failed' as const })),
        },
      },
    });
    expect(approvalRefusals(facts({ preexisting_failures: ['old'] }, red(['old'])))).toEqual([]);
    expect(approvalRefusals(facts({ preexisting_failures: ['old'] }, red(['new'])))[0]).toMatch(
      /status "failed"/,
    );
    expect(approvalRefusals(facts(null, red(['old'])))[0]).toMatch(/status "failed"/);
    // A run in which nothing reached a verdict is refused even when the base errs alike.
    const crashed = red(['old'], 'error');
    crashed.run.value.counts = { total: 1, passed: 0, failed: 0, errors: 1, skipped: 0 };
    expect(approvalRefusals(facts({ preexisting_failures: ['old'] }, crashed))[0]).toMatch(
      /No test ran to a verdict .* however the base fared/,
    );
    // A run cut short after some tests ran to a verdict is not said to have judged nothing.
    expect(
      approvalRefusals(facts({ preexisting_failures: ['old'] }, red(['old'], 'error')))[0],
    ).not.toMatch(/No test ran/);
    // The refusal names the failures the base does not share, and how each ended there.
    const unshared = [
      { test: 'new', at_base: 'not run' },
      { test: 'broken', at_base: 'passed' },
    ];
    expect(
      approvalRefusals(
        facts({ preexisting_failures: ['old'], unshared_failures: unshared }, red(['new'])),
      )[0],
    ).toMatch(
      /shares: new \(did not run at the base\), broken \(passed at the base\) \(a new test/,
    );
    // A failure under the id a pre-existing failure had at the base is another case when the
    // evaluation found it at the base by its values: refused, named by them.
    const moved = [{ test: 'old', at_base: 'passed', values: 'n=2', base_id: 'older' }];
    expect(
      approvalRefusals(
        facts({ preexisting_failures: ['old'], unshared_failures: moved }, red(['old'])),
      )[0],
    ).toMatch(/shares: old \(n=2: passed at the base, as older\)\.$/);
  });

  it('refuses a fresh run that no trusted evaluation describes', () => {
    expect(approvalRefusals(facts(null))).toEqual([
      expect.stringMatching(/no trusted evaluation describes test run r1/),
    ]);
  });

  it('turns settled static findings into explanations only when the trusted run exists', () => {
    const integrity = [
      {
        kind: 'test_deleted' as const,
        severity: 'must_fix' as const,
        file: 't.py',
        line: 3,
        detail: 'test `test_add` no longer exists',
      },
      {
        kind: 'module_stubbed' as const,
        severity: 'must_fix' as const,
        file: 't.py',
        line: 9,
        detail: 'stubs calc',
      },
    ];
    expect(approvalRefusals(facts({}, { integrity }))).toEqual([
      expect.stringMatching(/module_stubbed in t\.py:9/),
    ]);
    expect(
      approvalRefusals(facts(null, { integrity })).filter((reason) =>
        reason.startsWith('test integrity'),
      ),
    ).toHaveLength(2);
    expect(
      approvalRefusals(
        facts(
          { trusted: null, planted: [{ file: '.venv/bin/python', problem: 'a script' }] },
          { integrity },
        ),
      ),
    ).toHaveLength(3);
  });

  it('keeps a static finding blocking where the trusted run confirms it, unless acknowledged', () => {
    const integrity = [
      {
        kind: 'test_deleted' as const,
        severity: 'must_fix' as const,
        file: 'tests/t.py',
        line: 3,
        test: 'TestCalc.test_add',
        detail: 'test `TestCalc.test_add` no longer exists',
      },
      {
        kind: 'test_file_deleted' as const,
        severity: 'must_fix' as const,
        file: 'tests/u.py',
        detail: 'test file present at base was deleted',
      },
    ];
    const regressions = [{ test: 'tests/t.py::TestCalc::test_add', outcome: 'failed' as const }];
    const confirmed = approvalRefusals(facts({ regressions }, { integrity })).filter((reason) =>
      reason.startsWith('test integrity'),
    );
    expect(confirmed).toEqual([
      expect.stringMatching(
        /test_deleted in tests\/t\.py:3 .*the trusted run confirms it: tests\/t\.py::TestCalc::test_add failed/,
      ),
    ]);
    const acknowledged_changes = [{ test: 'test_add', criterion: 'AC-1', reason: 'spec' }];
    expect(approvalRefusals(facts({ regressions }, { integrity, acknowledged_changes }))).toEqual(
      [],
    );
    // A test that did not run at all cannot be acknowledged: the finding stays confirmed.
    const missing = [{ test: 'tests/u.py::test_x', outcome: 'missing' as const }];
    expect(
      approvalRefusals(facts({ regressions: missing }, { integrity, acknowledged_changes })),
    ).toEqual([
      expect.stringMatching(/tests\/u\.py::test_x passed at the base but did not run/),
      expect.stringMatching(
        /test_file_deleted in tests\/u\.py .*confirms it: tests\/u\.py::test_x missing/,
      ),
    ]);
  });

  it('refuses a test that fails when repeated, unless the replay explains it or it is acknowledged', () => {
    const findings = [
      { test: 'tests/t.py::test_first', message: 'assert 10 == 9' },
      { test: 'tests/t.py::test_id', explained_by: 'app/ids.py::next_id' },
    ];
    const [reason, ...others] = approvalRefusals(facts({ repetition: { findings } }));
    expect(others).toEqual([]);
    expect(reason).toMatch(
      /^fails_when_repeated: tests\/t\.py::test_first passed in the trusted run, then failed when run a second time in the same process: assert 10 == 9\./,
    );
    const acknowledged_changes = [{ test: 'test_first', criterion: 'AC-1', reason: 'a counter' }];
    expect(approvalRefusals(facts({ repetition: { findings } }, { acknowledged_changes }))).toEqual(
      [],
    );
  });
});
