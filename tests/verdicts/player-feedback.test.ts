import { describe, expect, it } from 'vitest';
import {
  FEEDBACK_MAX_CHARS,
  feedbackForPlayer,
  type PlayerFeedbackInput,
} from '../../src/verdicts/player-feedback.js';
import type { VerdictIssue } from '../../src/verdicts/verdict-entry.js';

const SUMMARY = [
  'tests/test_db.py::TestUserRepo::test_create FAILED',
  '    conn = connect(DSN)',
  'E   ConnectionRefusedError: [Errno 111] Connection refused',
  'src/db/connection.py:41: ConnectionRefusedError',
  '=== 12 failed, 3 passed in 1.52s ===',
].join('\n');

const FAILING = Array.from(
  { length: 12 },
  (_, index) => `tests/test_db.py::test_case_${index + 1}`,
);

function input(fields: Partial<PlayerFeedbackInput> = {}): PlayerFeedbackInput {
  return {
    turn: 2,
    rationale: 'The repository cannot reach the database in tests.',
    issues: [
      {
        severity: 'should_fix',
        category: 'style',
        description: 'connect() is 80 lines long',
        location: 'src/db/connection.py:10',
        suggestion: 'Split it.',
      },
      {
        severity: 'info',
        category: 'extra',
        description: 'SECRET-INFO-NOTE about an unrequested flag',
      },
      {
        severity: 'must_fix',
        category: 'tests',
        description: 'The database tests fail with ConnectionRefusedError',
        location: 'src/db/connection.py:41',
        suggestion: 'Use the sqlite fixture from conftest.py instead of a live server.',
      },
    ],
    latest_run: {
      status: 'failed',
      summary: SUMMARY,
      failure_class: 'infrastructure',
      advice: 'A service the tests need is not reachable: start it or use a fixture.',
      failing_tests: FAILING,
    },
    requirements: [
      {
        id: 'AC-1',
        text: 'Users are stored',
        status: 'verified',
        evidence: [{ file: 'src/db/repo.py', line: 12, valid: true }],
      },
      {
        id: 'AC-2',
        text: 'Users can log out',
        status: 'claimed_unverified',
        evidence: [
          {
            file: 'src/auth.py',
            line: 99,
            valid: false,
            problem: 'line 99 does not exist (file has 40 lines)',
          },
        ],
      },
      { id: 'AC-3', text: 'Every change is audited', status: 'missing', evidence: [] },
    ],
    ...fields,
  };
}

function positionOf(text: string, part: string): number {
  const index = text.indexOf(part);
  expect(index, `"${part}" is missing`).toBeGreaterThanOrEqual(0);
  return index;
}

describe('feedbackForPlayer', () => {
  it('puts must-fix first, then should-fix, then the test run, then unmet criteria', () => {
    const text = feedbackForPlayer(input());
    expect(text.startsWith('## Coach feedback (turn 2)\n')).toBe(true);
    const order = [
      '### Must fix (1)',
      '### Should fix (1)',
      '### Latest independent test run: failed',
      '### Unmet acceptance criteria (2)',
    ].map((part) => positionOf(text, part));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(text).toContain(
      [
        '1. **tests**: The database tests fail with ConnectionRefusedError',
        '   - Location: `src/db/connection.py:41`',
        '   - Suggestion: Use the sqlite fixture from conftest.py instead of a live server.',
      ].join('\n'),
    );
    expect(text).not.toContain('SECRET-INFO-NOTE');
  });

  it('carries the error from the latest run: summary, failure class, advice and up to 10 failing tests', () => {
    const text = feedbackForPlayer(input());
    expect(text).toContain(
      '### Latest independent test run: failed (failure class: infrastructure)',
    );
    expect(text).toContain(
      'Advice: A service the tests need is not reachable: start it or use a fixture.',
    );
    expect(text).toContain(`\`\`\`text\n${SUMMARY}\n\`\`\``);
    expect(text).toContain('Failing tests (12):');
    expect(text).toContain('- `tests/test_db.py::test_case_10`');
    expect(text).not.toContain('test_case_11`');
    expect(text).toContain('- … and 2 more');
  });

  it('names each unmet criterion with why it is unmet and what is wrong with its evidence', () => {
    const criteria = feedbackForPlayer(input()).split('### Unmet acceptance criteria (2)')[1]!;
    expect(criteria).toContain(
      '- **AC-2**: Users can log out (claimed, but the evidence does not hold)\n  - `src/auth.py:99`: line 99 does not exist (file has 40 lines)',
    );
    expect(criteria).toContain(
      '- **AC-3**: Every change is audited (missing: not claimed, no evidence)',
    );
    expect(criteria).not.toContain('AC-1');
  });

  it('says what was checked when there is nothing specific to fix', () => {
    const text = feedbackForPlayer(
      input({
        issues: [],
        latest_run: {
          status: 'passed',
          summary: '3 passed',
          failure_class: 'none',
          advice: '',
          failing_tests: [],
        },
        requirements: input().requirements.slice(0, 1),
      }),
    );
    expect(text).toContain('### What was checked');
    expect(text).toContain('- Tests: the latest independent test run passed.');
    expect(text).toContain('- Acceptance criteria: 1 of 1 verified.');
    expect(text).toContain(
      "### Coach's note\n\n> The repository cannot reach the database in tests.",
    );
  });

  it('says when no independent run is stored instead of leaving the test section out', () => {
    expect(feedbackForPlayer(input({ latest_run: null }))).toContain(
      '### Latest independent test run: none recorded',
    );
  });

  it('fits a long verdict into the limit, cutting should-fix and details but keeping every must-fix item', () => {
    const long = (label: string) => `${label} ${'detail '.repeat(60)}`;
    const mustFix: VerdictIssue[] = Array.from({ length: 4 }, (_, index) => ({
      severity: 'must_fix',
      category: 'bug',
      description: `MUST-${index + 1} ${long('broken')}`,
      location: `src/module_${index + 1}.py:${index + 10}`,
      suggestion: long('do this'),
    }));
    const shouldFix: VerdictIssue[] = Array.from({ length: 20 }, (_, index) => ({
      severity: 'should_fix',
      category: 'style',
      description: `SHOULD-${index + 1} ${long('tidy')}`,
    }));
    const text = feedbackForPlayer(
      input({
        rationale: long('note'),
        issues: [...shouldFix, ...mustFix],
        latest_run: {
          ...input().latest_run!,
          summary: `${SUMMARY}\n${'x'.repeat(1400)}`,
          failing_tests: Array.from(
            { length: 40 },
            (_, index) => `tests/test_${index}.py::test_long_name_${index}`,
          ),
        },
        requirements: Array.from({ length: 10 }, (_, index) => ({
          id: `AC-${index + 1}`,
          text: long('criterion'),
          status: 'missing' as const,
          evidence: [],
        })),
      }),
    );
    expect(text.length).toBeLessThanOrEqual(FEEDBACK_MAX_CHARS);
    for (const issue of mustFix) {
      expect(text).toContain(`MUST-${issue.description.split(' ')[0]!.slice(5)} broken`);
      expect(text).toContain(`- Location: \`${issue.location}\``);
    }
    expect(text).toContain('ConnectionRefusedError: [Errno 111] Connection refused');
    expect(text).toContain('(failure class: infrastructure)');
    expect(text).toContain('### Should fix (20)');
    expect(text).toMatch(/\(\d+ (?:more )?omitted to keep this feedback short\.\)/);
    expect(text).toContain('**AC-10**');
    expect(text).not.toContain("### Coach's note");
  });

  it('keeps all must-fix items, shortened, even when they alone exceed the limit', () => {
    const mustFix: VerdictIssue[] = Array.from({ length: 12 }, (_, index) => ({
      severity: 'must_fix',
      category: 'bug',
      description: `MUST-${index + 1}: ${'very long explanation '.repeat(60)}`,
      location: `src/file_${index + 1}.ts:${index + 1}`,
    }));
    const text = feedbackForPlayer(input({ issues: mustFix }));
    for (let number = 1; number <= 12; number++) {
      expect(text).toContain(`${number}. **bug**: MUST-${number}: very long`);
      expect(text).toContain(`- Location: \`src/file_${number}.ts:${number}\``);
    }
    expect(text.length).toBeLessThan(
      mustFix.reduce((sum, issue) => sum + issue.description.length, 0),
    );
  });
});
