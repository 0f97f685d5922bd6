import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CallerError } from '../../src/errors/errors.js';
import {
  detectStall,
  feedbackSignature,
  normaliseFeedback,
  type StallTurn,
} from '../../src/verdicts/stall.js';

const COVERAGE_FEEDBACK =
  'Coverage threshold not met (72% < 80%). Add tests for src/db/repository.py.';

/** Test-failure feedback in the shape the TASK-DB-003 Coach wrote it: only the variable parts change. */
function dbFailureFeedback(turn: number, testClass: string, testName: string): string {
  return [
    `tests/test_db.py::${testClass}::${testName} FAILED - ConnectionRefusedError: [Errno 111] Connection refused`,
    `  File "/home/dev/project/src/db/connection.py", line ${40 + turn}, in connect`,
    `${testClass}::${testName} raised at src/db/connection.py:${40 + turn}`,
    `run ${(0x3fa9c2e0 + turn).toString(16)}a at 2024-05-0${turn}T10:2${turn}:33Z took ${turn * 120}ms`,
    `${turn + 2} failed, ${turn * 3} passed in ${turn}.5${turn}s`,
  ].join('\n');
}

/** The TASK-DB-003 post-mortem: 18 turns, test names changed every turn, the raw-hash detector never fired. */
const TASK_DB_003: StallTurn[] = [
  ['TestUserRepo', 'test_create'],
  null,
  ['TestOrderRepository', 'test_insert'],
  ['TestInvoiceRepo', 'test_update_total'],
  ['TestCustomerRepository', 'test_delete_cascade'],
  ['TestProductRepo', 'test_find_by_sku'],
  ['TestPaymentRepository', 'test_refund'],
  ['TestShipmentRepo', 'test_track'],
].map((names, index) => ({
  feedback: names === null ? COVERAGE_FEEDBACK : dbFailureFeedback(index + 1, names[0]!, names[1]!),
  criteria_passed: 0,
}));

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('normaliseFeedback', () => {
  it('replaces test ids, paths, line numbers, durations, counts, hashes and timestamps', () => {
    expect(normaliseFeedback(TASK_DB_003[0]!.feedback)).toBe(
      '<test> failed - connectionrefusederror: [errno <n>] connection refused ' +
        'file "<path>", line <line>, in connect ' +
        '<test> raised at <path>:<line> ' +
        'run <hex> at <time> took <duration> ' +
        '<n> failed, <n> passed in <duration>',
    );
  });

  it('replaces UUIDs, percentages, hex addresses and JS test titles', () => {
    expect(
      normaliseFeedback(
        'request 123e4567-e89b-12d3-a456-426614174000 at 0x7f3a2b10 hit 91.5% coverage',
      ),
    ).toBe('request <uuid> at <hex> hit <pct> coverage');
    expect(
      normaliseFeedback(
        ' FAIL  tests/verdicts/stall.test.ts > detectStall > fires at turn 5 - AssertionError',
      ),
    ).toBe('fail <test> - assertionerror');
    expect(normaliseFeedback('● UserService › creates a user')).toBe('<test>');
  });

  it('keeps the words, so different kinds of feedback stay different', () => {
    expect(feedbackSignature(COVERAGE_FEEDBACK)).not.toBe(
      feedbackSignature(TASK_DB_003[0]!.feedback),
    );
    expect(feedbackSignature('3 tests failed')).not.toBe(
      feedbackSignature('coverage threshold not met'),
    );
    expect(normaliseFeedback('Player/Coach and/or os.path')).toBe('player/coach and/or os.path');
  });

  it('gives a 12-character hex signature', () => {
    expect(feedbackSignature('anything')).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe('detectStall', () => {
  it('fires at turn 5 on the TASK-DB-003 sequence although every raw feedback differs', () => {
    const failureTurns = TASK_DB_003.filter((_, index) => index !== 1).map((turn) => turn.feedback);
    // The old detector's view: every raw hash is different, so it never fired.
    expect(new Set(failureTurns.map(sha256)).size).toBe(failureTurns.length);
    expect(new Set(failureTurns.map(feedbackSignature)).size).toBe(1);

    const report = detectStall(TASK_DB_003);
    expect(report).toMatchObject({
      stalled: true,
      reason: 'repeated_feedback',
      first_stalled_turn: 5,
    });
    expect(report.signatures).toHaveLength(8);
    expect(report.recommendation).toMatch(/escalate to a human/);
    expect(report.recommendation).toMatch(/has not changed in 3 turns \(turns 3-5\)/);
  });

  it('reports the first stalled turn no matter how many turns follow', () => {
    for (let length = 5; length <= TASK_DB_003.length; length++) {
      expect(detectStall(TASK_DB_003.slice(0, length)).first_stalled_turn).toBe(5);
    }
    expect(detectStall(TASK_DB_003.slice(0, 4)).stalled).toBe(false);
  });

  it('does not stall while criteria_passed rises every turn, even with identical feedback', () => {
    const history = Array.from({ length: 8 }, (_, index) => ({
      feedback: 'tests/test_api.py::test_get FAILED',
      criteria_passed: index,
    }));
    const report = detectStall(history);
    expect(report).toMatchObject({ stalled: false, reason: null, first_stalled_turn: null });
    expect(report.recommendation).toMatch(/^Continue/);
  });

  it('gives partial progress two more turns before calling repeated feedback a stall', () => {
    const history = [0, 2, 2, 2, 2, 2, 2].map((criteria_passed) => ({
      feedback: 'lint errors remain',
      criteria_passed,
    }));
    // With criteria passed the window is 5 turns; the rise at turn 2 counts until it leaves the window.
    const report = detectStall(history);
    expect(report).toMatchObject({
      stalled: true,
      reason: 'repeated_feedback',
      first_stalled_turn: 7,
    });
    expect(report.recommendation).toMatch(/has not changed in 5 turns \(turns 3-7\)/);

    const withoutProgress = history.map((turn) => ({ ...turn, criteria_passed: 0 }));
    expect(detectStall(withoutProgress).first_stalled_turn).toBe(3);
  });

  it('measures progress in the window against the best before it', () => {
    const flat = [1, 1, 1, 1, 1, 3].map((criteria_passed) => ({
      feedback: 'still failing',
      criteria_passed,
    }));
    // Window 1-5 never beats turn 1; a later improvement does not undo the first stalled turn.
    expect(detectStall(flat).first_stalled_turn).toBe(5);
    const improving = [1, 1, 1, 3, 3, 3].map((criteria_passed) => ({
      feedback: 'still failing',
      criteria_passed,
    }));
    expect(detectStall(improving).stalled).toBe(false);
    // Five flat turns after the rise at turn 4 (turns 5-9) are a stall.
    const flatAfterRise = [...improving, ...improving.slice(3)];
    expect(detectStall(flatAfterRise.slice(0, 8)).stalled).toBe(false);
    expect(detectStall(flatAfterRise).first_stalled_turn).toBe(9);
  });

  it('detects the same set of failing tests in consecutive turns, order-insensitive', () => {
    const history: StallTurn[] = [
      { feedback: 'first attempt', criteria_passed: 0, failing_tests: ['t::b', 't::a'] },
      { feedback: 'second, reworded', criteria_passed: 1, failing_tests: ['t::a', 't::b'] },
      {
        feedback: 'a third wording entirely',
        criteria_passed: 2,
        failing_tests: ['t::b', 't::a', 't::a'],
      },
    ];
    const report = detectStall(history);
    expect(report).toMatchObject({ stalled: true, reason: 'same_failures', first_stalled_turn: 3 });
    expect(report.recommendation).toContain('t::a, t::b');

    const changed = history.map((turn, index) =>
      index === 1 ? { ...turn, failing_tests: ['t::a'] } : turn,
    );
    expect(detectStall(changed).stalled).toBe(false);
    const empty = history.map((turn) => ({ ...turn, failing_tests: [] }));
    expect(detectStall(empty).stalled).toBe(false);
  });

  it('detects a Player that changed nothing between two turns', () => {
    const history: StallTurn[] = [
      { feedback: 'add input validation', criteria_passed: 0, tree_hash: 'aaa111' },
      { feedback: 'validation still missing', criteria_passed: 1, tree_hash: 'bbb222' },
      { feedback: 'handle the empty string', criteria_passed: 2, tree_hash: 'bbb222' },
    ];
    const report = detectStall(history);
    expect(report).toMatchObject({ stalled: true, reason: 'no_changes', first_stalled_turn: 3 });
    expect(report.recommendation).toContain('between turns 2 and 3');

    const unknownTrees = history.map(({ tree_hash: _unused, ...turn }) => turn);
    expect(detectStall(unknownTrees).stalled).toBe(false);
  });

  it('counts only feedback given after a new Player turn: repeated verdicts on one Player turn never stall', () => {
    const twice: StallTurn[] = [
      { feedback: 'greeting is wrong', criteria_passed: 0, tree_hash: 'aaa111', player_turn: 1 },
      { feedback: 'greeting is wrong', criteria_passed: 0, tree_hash: 'aaa111', player_turn: 1 },
      { feedback: 'greeting is wrong', criteria_passed: 0, tree_hash: 'aaa111', player_turn: 1 },
    ];
    expect(detectStall(twice)).toMatchObject({ stalled: false, signatures: [expect.any(String)] });
    // A Coach reviewing twice before any report (player_turn 0), with failing tests: still one turn.
    const unreported = twice.map((turn) => ({ ...turn, player_turn: 0, failing_tests: ['t::x'] }));
    expect(detectStall(unreported, { threshold: 2 }).stalled).toBe(false);
    // Once the Player records a turn and changes nothing, the rule fires at the verdict after it.
    const report = detectStall([
      ...twice,
      { ...twice[0]!, feedback: 'still wrong', player_turn: 2, turn: 4 },
    ]);
    expect(report).toMatchObject({ stalled: true, reason: 'no_changes', first_stalled_turn: 4 });
  });

  it('detects feedback oscillating between two states', () => {
    const history = [
      'type error in handler',
      'lint: unused import',
      'type error in handler',
      'lint: unused import',
    ].map((feedback, index) => ({ feedback, criteria_passed: index }));
    const report = detectStall(history);
    expect(report).toMatchObject({ stalled: true, reason: 'oscillation', first_stalled_turn: 4 });
    expect(detectStall(history.slice(0, 3)).stalled).toBe(false);
  });

  it('reports the rule first in order when several fire at the same turn', () => {
    const history = Array.from({ length: 3 }, () => ({
      feedback: 'same',
      criteria_passed: 0,
      failing_tests: ['t::x'],
      tree_hash: 'abc',
    }));
    // no_changes fires at turn 2 already; at turn 3 repeated_feedback would outrank it.
    expect(detectStall(history)).toMatchObject({ reason: 'no_changes', first_stalled_turn: 2 });
    // Without trees, repeated_feedback and same_failures both fire at turn 3: the first in order wins.
    const treeless = history.map(({ tree_hash: _unused, ...turn }) => turn);
    expect(detectStall(treeless)).toMatchObject({
      reason: 'repeated_feedback',
      first_stalled_turn: 3,
    });
    const reworded = treeless.map((turn, index) => ({
      ...turn,
      feedback: ['a', 'b', 'a'][index]!,
    }));
    expect(detectStall(reworded)).toMatchObject({ reason: 'same_failures', first_stalled_turn: 3 });
  });

  it('handles an empty history', () => {
    expect(detectStall([])).toEqual({
      stalled: false,
      reason: null,
      first_stalled_turn: null,
      signatures: [],
      recommendation: 'Continue: no turns recorded yet.',
    });
  });

  it('honours the threshold option and rejects unusable thresholds', () => {
    expect(detectStall(TASK_DB_003, { threshold: 4 }).first_stalled_turn).toBe(6);
    expect(detectStall(TASK_DB_003, { threshold: 2 }).first_stalled_turn).toBe(4);
    expect(() => detectStall(TASK_DB_003, { threshold: 1 })).toThrow(CallerError);
    expect(() => detectStall(TASK_DB_003, { threshold: 2.5 })).toThrow(/integer of at least 2/);
  });
});
