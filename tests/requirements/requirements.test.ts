import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  evaluateRequirements,
  filesToRead,
  type EvidenceInput,
  type RequirementsInput,
} from '../../src/requirements/requirements.js';
import { playerClaims } from '../../src/tasks/task-work-results.js';
import { parseTaskMarkdown } from '../../src/tasks/task.js';
import { SAMPLE_TASK } from '../helpers/git-repo.js';

const CRITERIA = parseTaskMarkdown(SAMPLE_TASK, 'TASK-001.md').acceptance_criteria; // AC-001 greet, AC-002 empty names, AC-003 tests

const GREET_PY =
  [
    'def greet(name):', //                        1
    '    """Say hello."""', //                     2
    '    if not name:', //                         3
    '        raise ValueError(', //                4
    '            "name must not be empty"', //     5
    '        )', //                                6
    '    return f"Hello, {name}!"', //             7
    '', //                                         8
    '# end', //                                    9
  ].join('\n') + '\n';

const PASSED = [
  'tests/test_greet.py::test_greeting',
  'tests/test_greet.py::test_empty_name_raises',
  'test/greet.test.js > greet > greets by name',
];

function evaluate(overrides: Partial<RequirementsInput> = {}) {
  return evaluateRequirements({
    criteria: CRITERIA,
    player_claims: [],
    promises: [],
    coach_evidence: [],
    require_evidence: true,
    files: new Map<string, string | null>([
      ['src/greet.py', GREET_PY],
      ['tests/test_greet.py', 'def test_greeting(): ...\n'],
    ]),
    passed_tests: PASSED,
    ...overrides,
  });
}

/** The single check made for one Coach evidence item about AC-001. */
function checkOf(
  item: Omit<EvidenceInput, 'criterion'>,
  overrides: Partial<RequirementsInput> = {},
) {
  const report = evaluate({ coach_evidence: [{ criterion: 'AC-001', ...item }], ...overrides });
  const [check] = report.criteria[0]!.evidence;
  return { check: check!, status: report.criteria[0]!.status };
}

describe('file evidence', () => {
  it('is valid for a line of an existing file and verifies the criterion', () => {
    const { check, status } = checkOf({
      file: 'src/greet.py',
      line: 7,
      snippet: 'return f"Hello, {name}!"',
    });
    expect(check).toEqual({
      criterion: 'AC-001',
      file: 'src/greet.py',
      line: 7,
      snippet: 'return f"Hello, {name}!"',
      source: 'coach',
      valid: true,
    });
    expect(status).toBe('verified');
  });

  it('reports a file that is not in the worktree, whether unread or missing', () => {
    expect(checkOf({ file: 'src/nope.py', line: 1 }).check).toMatchObject({
      valid: false,
      problem: 'file not found in the worktree: src/nope.py',
    });
    const outside = checkOf(
      { file: '../etc/passwd' },
      { files: new Map([['../etc/passwd', null]]) },
    );
    expect(outside.check).toMatchObject({
      valid: false,
      problem: 'file not found in the worktree: ../etc/passwd',
    });
    expect(outside.status).toBe('claimed_unverified');
  });

  it('reports a line beyond the end, not counting the final newline as a line', () => {
    expect(checkOf({ file: 'src/greet.py', line: 9 }).check.valid).toBe(true);
    expect(checkOf({ file: 'src/greet.py', line: 10 }).check).toMatchObject({
      valid: false,
      problem: 'line 10 is beyond the end of src/greet.py (9 lines)',
    });
    expect(checkOf({ file: 'src/greet.py', line: 0 }).check).toMatchObject({
      valid: false,
      problem: 'line 0 is not a line number (lines start at 1)',
    });
  });

  it('finds a snippet up to 3 lines either side of the line, but not 4', () => {
    expect(
      checkOf({ file: 'src/greet.py', line: 4, snippet: 'return f"Hello, {name}!"' }).check.valid,
    ).toBe(true); // line 7
    expect(
      checkOf({ file: 'src/greet.py', line: 4, snippet: 'def greet(name):' }).check.valid,
    ).toBe(true); // line 1
    expect(
      checkOf({ file: 'src/greet.py', line: 3, snippet: 'return f"Hello, {name}!"' }).check,
    ).toMatchObject({
      valid: false,
      problem: 'snippet not found within 3 lines of line 3 in src/greet.py',
    });
    expect(
      checkOf({ file: 'src/greet.py', line: 5, snippet: 'def greet(name):' }).check.valid,
    ).toBe(false); // line 1
  });

  it('matches a snippet across consecutive lines with whitespace normalised', () => {
    expect(
      checkOf({
        file: 'src/greet.py',
        line: 4,
        snippet: '  raise   ValueError(\n "name must not be empty" )  ',
      }).check.valid,
    ).toBe(true);
    // Lines 6-7, seen from line 4: both inside the window.
    expect(
      checkOf({ file: 'src/greet.py', line: 4, snippet: ') return f"Hello' }).check.valid,
    ).toBe(true);
    // Lines 7-9 (8 is blank), seen from line 4: the end lies outside the window.
    expect(
      checkOf({ file: 'src/greet.py', line: 4, snippet: '"Hello, {name}!" # end' }).check.valid,
    ).toBe(false);
  });

  it('searches the whole file when no line is given, and rejects a wrong snippet', () => {
    expect(checkOf({ file: 'src/greet.py', snippet: '# end' }).check.valid).toBe(true);
    expect(checkOf({ file: 'src/greet.py', snippet: 'return "Hi"' }).check).toMatchObject({
      valid: false,
      problem: 'snippet not found in src/greet.py',
    });
    expect(checkOf({ file: 'src/greet.py', snippet: 'Return f"hello, {name}!"' }).check.valid).toBe(
      false,
    ); // case matters in code
  });
});

describe('test evidence', () => {
  it('matches a passed test exactly or by a suffix after a separator', () => {
    expect(checkOf({ test: 'tests/test_greet.py::test_greeting' }).check).toMatchObject({
      valid: true,
      matched_test: 'tests/test_greet.py::test_greeting',
    });
    expect(checkOf({ test: 'test_greeting' }).check).toMatchObject({
      valid: true,
      matched_test: 'tests/test_greet.py::test_greeting',
    });
    expect(checkOf({ test: 'test_greet.py::test_greeting' }).check.valid).toBe(true);
    expect(checkOf({ test: 'greets by name' }).check).toMatchObject({
      valid: true,
      matched_test: 'test/greet.test.js > greet > greets by name',
    });
    expect(checkOf({ test: 'greet > greets by name' }).check.valid).toBe(true);
  });

  it('says a run without per-test results cannot show a test passed, instead of "did not pass"', () => {
    const { check } = checkOf(
      { test: 'test_greeting' },
      { passed_tests: [], latest_run_lists_tests: false },
    );
    expect(check).toMatchObject({
      valid: false,
      problem: expect.stringContaining('this run has no per-test results'),
    });
    expect(check.problem).not.toMatch(/did not pass/);
  });

  it('rejects a test that did not pass, or a partial name', () => {
    expect(checkOf({ test: 'test_unicode_names' }).check).toMatchObject({
      valid: false,
      problem: 'test test_unicode_names did not pass in the latest run',
    });
    expect(checkOf({ test: 'greeting' }).check.valid).toBe(false);
    expect(checkOf({ test: 'by name' }).check.valid).toBe(false);
  });

  it('asks for a test run when none is stored', () => {
    const { check, status } = checkOf({ test: 'test_greeting' }, { passed_tests: null });
    expect(check).toMatchObject({
      valid: false,
      problem: 'no stored test run for this task: run run_independent_tests first',
    });
    expect(status).toBe('claimed_unverified');
  });

  it('needs every part of an item to hold', () => {
    expect(checkOf({ file: 'src/greet.py', line: 7, test: 'test_greeting' }).check.valid).toBe(
      true,
    );
    expect(checkOf({ file: 'src/missing.py', test: 'test_missing' }).check.problem).toBe(
      'file not found in the worktree: src/missing.py; test test_missing did not pass in the latest run',
    );
  });
});

describe('evidence without substance', () => {
  it('rejects an item with neither a file nor a test', () => {
    const { check, status } = checkOf({ snippet: 'I implemented it' });
    expect(check).toMatchObject({
      valid: false,
      problem: 'evidence needs a file (with line/snippet) or a passed test',
    });
    expect(status).toBe('claimed_unverified');
    expect(checkOf({ file: '  ', test: '' }).check.valid).toBe(false);
  });

  it('rejects a snippet that has no file to be checked against', () => {
    expect(checkOf({ test: 'test_greeting', snippet: 'return f"Hello' }).check).toMatchObject({
      valid: false,
      problem: 'line/snippet need a file to be checked against',
    });
  });
});

describe('completion promises', () => {
  it('count their files as evidence for the criterion they name, once per file; a promised file that is missing contradicts the claim', () => {
    const report = evaluate({
      promises: [
        {
          criterion_id: 'AC-001',
          status: 'complete',
          test_file: 'tests/test_greet.py',
          implementation_files: ['src/greet.py', 'src/gone.py'],
        },
        { criterion_id: 'AC-1', implementation_files: ['src/greet.py'] },
      ],
    });
    expect(report.criteria[0]).toMatchObject({
      status: 'claimed_unverified',
      claimed_by: ['player'],
    });
    expect(report.criteria[0]!.evidence).toEqual([
      { criterion: 'AC-001', file: 'tests/test_greet.py', source: 'player_promise', valid: true },
      { criterion: 'AC-001', file: 'src/greet.py', source: 'player_promise', valid: true },
      {
        criterion: 'AC-001',
        file: 'src/gone.py',
        source: 'player_promise',
        valid: false,
        problem: 'file not found in the worktree: src/gone.py',
      },
    ]);
  });

  it('leave a criterion unverified when none of their files exists', () => {
    const report = evaluate({
      promises: [{ criterion_text: 'Tests cover both cases', test_file: 'tests/test_both.py' }],
    });
    expect(report.criteria[2]).toMatchObject({
      status: 'claimed_unverified',
      claimed_by: ['player'],
    });
  });

  it('are neither claims nor evidence unless complete', () => {
    const promises = [
      { criterion_id: 'AC-001', status: 'partial', test_file: 'tests/test_greet.py' },
    ];
    expect(evaluate({ promises }).criteria[0]).toMatchObject({
      status: 'missing',
      claimed_by: [],
      evidence: [],
    });
    expect(filesToRead([], promises)).toEqual([]);
  });
});

describe('criterion status and totals', () => {
  const claims = {
    player_claims: ['AC-001', 'Empty names raise a ValueError'],
    coach_evidence: [{ criterion: 'AC-001', test: 'test_greeting' }],
  };

  it('with evidence required, counts only verified criteria as met', () => {
    const report = evaluate(claims);
    expect(report.criteria.map((c) => [c.id, c.status, c.claimed_by])).toEqual([
      ['AC-001', 'verified', ['player', 'coach']],
      ['AC-002', 'claimed_unverified', ['player']],
      ['AC-003', 'missing', []],
    ]);
    expect(report).toMatchObject({
      criteria_total: 3,
      criteria_met: 1,
      all_criteria_met: false,
      missing: ['AC-002', 'AC-003'],
    });
  });

  it('without evidence required, counts claims as met but keeps their status honest', () => {
    const report = evaluate({ ...claims, require_evidence: false });
    expect(report.criteria[1]!.status).toBe('claimed_unverified');
    expect(report).toMatchObject({ criteria_met: 2, all_criteria_met: false, missing: ['AC-003'] });
    const all = evaluate({ player_claims: ['AC-1', 'AC-2', 'AC-3'], require_evidence: false });
    expect(all).toMatchObject({ criteria_met: 3, all_criteria_met: true, missing: [] });
  });

  it('counts a criterion the Coach only referenced, with invalid evidence, as claimed', () => {
    const report = evaluate({
      coach_evidence: [{ criterion: 'Tests cover both cases', file: 'tests/test_both.py' }],
    });
    expect(report.criteria[2]).toMatchObject({
      status: 'claimed_unverified',
      claimed_by: ['coach'],
    });
  });

  it('is met only when every criterion is verified', () => {
    const report = evaluate({
      coach_evidence: [
        { criterion: 'AC-001', test: 'test_greeting' },
        { criterion: 'AC-002', file: 'src/greet.py', line: 4, snippet: 'raise ValueError(' },
        { criterion: '**AC-003**', test: 'test_greeting' },
      ],
    });
    expect(report).toMatchObject({
      criteria_total: 3,
      criteria_met: 3,
      all_criteria_met: true,
      missing: [],
      unmatched_claims: [],
    });
  });

  it('counts a line inside a test as that test, and never a helper, fixture or config line', () => {
    const tests = [
      'import pytest',
      '',
      '',
      '@pytest.fixture',
      'def name():',
      '    return "Ada"',
      '',
      '',
      'def test_greeting(name):',
      '    result = greet(name)',
      '    assert result == "Hello, Ada!"',
      '',
      '',
      'def test_shout():',
      '    assert shout("a") == "A!"',
      '',
    ].join('\n');
    const files = new Map<string, string | null>([
      ['src/greet.py', GREET_PY],
      ['tests/test_greet.py', tests],
      ['tests/helpers.py', 'def check(x):\n    assert x\n'],
    ]);
    const check = (item: Omit<EvidenceInput, 'criterion'>) =>
      evaluate({ files, coach_evidence: [{ criterion: 'AC-001', ...item }] }).criteria[0]!
        .evidence[0]!;
    // Inside test_greeting, which passed: verified through that test.
    expect(check({ file: 'tests/test_greet.py', line: 11 })).toMatchObject({
      valid: true,
      matched_test: 'tests/test_greet.py::test_greeting',
    });
    expect(check({ file: 'tests/test_greet.py', snippet: 'def test_greeting' }).valid).toBe(true);
    // Inside test_shout, which did not pass: the test's own problem.
    expect(check({ file: 'tests/test_greet.py', line: 15 }).problem).toMatch(
      /test test_shout did not pass in the latest run/,
    );
    // A fixture, a helper module: never.
    for (const item of [
      { file: 'tests/test_greet.py', line: 6 },
      { file: 'tests/helpers.py', snippet: 'assert x' },
    ])
      expect(check(item).problem).toMatch(
        /is not inside a test .* never shows the product does it/,
      );
  });

  it('checks a place inside a Go, Rust or snapshot test as that test, by the runner’s id', () => {
    const goTest = [
      'package shout',
      'func TestShout(t *testing.T) {',
      '\tt.Run("loud", func(t *testing.T) { check(t) })',
      '\tt.Run("quiet", func(t *testing.T) {',
      '\t\tcheck(t)',
      '\t})',
      '}',
    ].join('\n');
    const lib =
      'pub fn f() {}\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn f_runs() { f() }\n}\n';
    const snap = 'exports[`shout > says it 1`] = `"HI!"`;\n';
    const files = new Map<string, string | null>([
      ['shout_test.go', goTest],
      ['src/lib.rs', lib],
      ['test/__snapshots__/shout.test.js.snap', snap],
    ]);
    const passed = [
      'example.com/shout/TestShout/loud',
      'example.com/shout/TestShout/quiet',
      'tests::f_runs',
      'test/shout.test.js > shout > says it',
    ];
    const check = (item: Omit<EvidenceInput, 'criterion'>, more: Partial<RequirementsInput> = {}) =>
      evaluate({
        files,
        passed_tests: passed,
        coach_evidence: [{ criterion: 'AC-001', ...item }],
        ...more,
      }).criteria[0]!.evidence[0]!;
    // The parent stands for its subtests; a subtest for itself.
    expect(check({ file: 'shout_test.go', line: 2 })).toMatchObject({
      valid: true,
      matched_test: 'example.com/shout/TestShout',
    });
    expect(check({ file: 'shout_test.go', line: 5 }).matched_test).toBe(
      'example.com/shout/TestShout/quiet',
    );
    // One failing subtest and the parent did not pass; all passing on the base code: no exercise.
    expect(
      check(
        { file: 'shout_test.go', line: 2 },
        { passed_tests: passed.slice(1), failed_tests: [passed[0]!] },
      ).problem,
    ).toMatch(/test TestShout did not pass in the latest run: \S+TestShout\/loud failed/);
    expect(
      check({ file: 'shout_test.go', line: 2 }, { passing_on_base_code: passed.slice(0, 2) })
        .problem,
    ).toMatch(/also passes on the base code/);
    expect(
      check({ file: 'shout_test.go', line: 2 }, { passing_on_base_code: passed.slice(0, 1) }).valid,
    ).toBe(true);
    // An inline Rust unit test counts as its test; the code beside it stays product code.
    expect(check({ file: 'src/lib.rs', line: 5 }).matched_test).toBe('tests::f_runs');
    expect(check({ file: 'src/lib.rs', line: 5 }, { passed_tests: [] }).problem).toMatch(
      /test tests::f_runs did not pass/,
    );
    expect(check({ file: 'src/lib.rs', line: 1, snippet: 'pub fn f' })).toMatchObject({
      valid: true,
    });
    // A snapshot entry is the test that wrote it, a jest key (titles joined by spaces) too.
    expect(check({ file: 'test/__snapshots__/shout.test.js.snap', line: 1 }).matched_test).toBe(
      'test/shout.test.js > shout > says it',
    );
    const jestFiles = new Map(files).set(
      'test/__snapshots__/shout.test.js.snap',
      'exports[`shout says it 1`] = `"HI!"`;\n\n// trailing\n',
    );
    expect(
      check({ file: 'test/__snapshots__/shout.test.js.snap', line: 1 }, { files: jestFiles })
        .matched_test,
    ).toBe('test/shout.test.js > shout > says it');
    expect(
      check({ file: 'test/__snapshots__/shout.test.js.snap', line: 3 }, { files: jestFiles })
        .problem,
    ).toMatch(/is not inside a test/);
  });

  it('verifies kept behaviour by a base test that still passes, not by one failing on the base code', () => {
    const kept = { test: 'test_greeting', kept: true };
    const onBase = { passing_on_base_code: ['tests/test_greet.py::test_greeting'] };
    // Without `kept`, a test passing on the base code shows nothing; with it, that is the point.
    expect(checkOf({ test: 'test_greeting' }, onBase).check.problem).toMatch(
      /also passes on the base/,
    );
    expect(
      checkOf(kept, { ...onBase, kept_base_tests: ['tests/test_greet.py::test_greeting'] }),
    ).toMatchObject({ status: 'verified', check: { valid: true, kept: true } });
    // Not a base test that passed at the base and in the trusted run; no trusted runs; no test.
    expect(checkOf(kept, { ...onBase, kept_base_tests: [] }).check.problem).toMatch(
      /test test_greeting is not a base test that passed at the base and in the trusted run/,
    );
    expect(checkOf(kept).check.problem).toMatch(/only record_verdict approve makes/);
    expect(
      checkOf({ file: 'src/greet.py', line: 7, kept: true }, { kept_base_tests: [] }).check.problem,
    ).toMatch(/kept evidence names the base test/);
  });

  it('is never met for a task without criteria', () => {
    const report = evaluate({ criteria: [], player_claims: ['AC-001'], require_evidence: false });
    expect(report).toMatchObject({
      criteria_total: 0,
      criteria_met: 0,
      all_criteria_met: false,
      criteria: [],
      missing: [],
      unmatched_claims: ['AC-001'],
    });
  });
});

describe('unmatched claims', () => {
  it('lists Player claims and Coach evidence that name no criterion, once each, ignoring blanks', () => {
    const report = evaluate({
      player_claims: ['AC-009', 'Supports emoji', 'AC-009', '  ', 'AC-001'],
      promises: [{ criterion_id: 'AC-042', test_file: 'tests/test_greet.py' }],
      coach_evidence: [{ criterion: 'logging is quiet', file: 'src/greet.py', line: 1 }],
    });
    expect(report.unmatched_claims).toEqual([
      'AC-009',
      'Supports emoji',
      'AC-042',
      'logging is quiet',
    ]);
    expect(report.criteria.flatMap((c) => c.evidence)).toEqual([]);
  });
});

describe('filesToRead', () => {
  it('lists the files of evidence and complete promises once, in first-seen order', () => {
    expect(
      filesToRead(
        [
          { criterion: 'AC-001', file: 'src/greet.py' },
          { criterion: 'AC-002', test: 'x' },
          { criterion: 'AC-002', file: ' src/greet.py ' },
        ],
        [
          {
            criterion_id: 'AC-003',
            test_file: 'tests/test_greet.py',
            implementation_files: ['src/greet.py', 'src/util.py'],
          },
          { implementation_files: ['src/orphan.py'] },
        ],
      ),
    ).toEqual(['src/greet.py', 'tests/test_greet.py', 'src/util.py']);
  });
});

describe('evaluateRequirements end to end over a real worktree', () => {
  it('checks a GuardKit report whose promises use absolute paths against files read from disk', () => {
    const worktree = mkdtempSync(path.join(os.tmpdir(), 'coachgate-requirements-'));
    try {
      mkdirSync(path.join(worktree, 'src'));
      writeFileSync(path.join(worktree, 'src', 'greet.py'), GREET_PY);
      const { claims } = playerClaims(worktree, {
        requirements_addressed: ['AC-003'],
        completion_promises: [
          {
            criterion_id: 'AC-001',
            status: 'complete',
            implementation_files: [path.join(worktree, 'src', 'greet.py')],
          },
          {
            criterion_id: 'AC-002',
            status: 'complete',
            test_file: path.join(worktree, 'tests', 'test_empty.py'),
          },
        ],
      });
      const evidence = [
        { criterion: 'AC-002', file: 'src/greet.py', line: 5, snippet: '"name must not be empty"' },
      ];
      const files = new Map(
        filesToRead(evidence, claims.completion_promises).map((file) => {
          const absolute = path.join(worktree, file);
          return [file, readIfPresent(absolute)] as const;
        }),
      );
      const input = {
        criteria: CRITERIA,
        player_claims: claims.requirements_met,
        promises: claims.completion_promises,
        coach_evidence: evidence,
        require_evidence: true,
        files,
        passed_tests: [],
      };
      const report = evaluateRequirements(input);
      // AC-001's promised file exists, which proves nothing alone; AC-002's Coach evidence holds, but the
      // test file its promise names does not exist: neither is verified.
      expect(report.criteria.map((c) => c.status)).toEqual([
        'claimed_unverified',
        'claimed_unverified',
        'claimed_unverified',
      ]);
      expect(report.criteria[0]!.evidence.map((check) => [check.source, check.valid])).toEqual([
        ['player_promise', true],
      ]);
      expect(report.criteria[1]!.evidence.map((check) => [check.source, check.valid])).toEqual([
        ['coach', true],
        ['player_promise', false],
      ]);
      expect(report).toMatchObject({
        criteria_met: 0,
        all_criteria_met: false,
        missing: ['AC-001', 'AC-002', 'AC-003'],
        unmatched_claims: [],
      });
      // Same input, same report, byte for byte.
      expect(JSON.stringify(evaluateRequirements(input))).toBe(JSON.stringify(report));
    } finally {
      rmSync(worktree, { recursive: true, force: true });
    }
  });
});

function readIfPresent(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

describe('contradicting evidence', () => {
  it('leaves a criterion unverified when a test cited for it did not pass, even if a file for it exists', () => {
    const report = evaluateRequirements({
      criteria: [{ id: 'AC-003', text: 'names are trimmed', checked: false }],
      player_claims: ['AC-003'],
      promises: [
        { criterion_id: 'AC-003', status: 'complete', implementation_files: ['src/greet.js'] },
      ],
      coach_evidence: [{ criterion: 'AC-003', test: 'trims names before greeting' }],
      require_evidence: true,
      files: new Map([['src/greet.js', 'export function greet() {}\n']]),
      passed_tests: ['greets by name'],
    });
    expect(report.criteria[0]).toMatchObject({ status: 'claimed_unverified' });
    expect(report.criteria[0]!.evidence.map((check) => check.valid)).toEqual([false, true]);
    expect(report.all_criteria_met).toBe(false);
  });

  it("reports a Coach item that does not hold without hiding a valid one; a Player's false promise still contradicts", () => {
    const input = {
      criteria: [{ id: 'AC-003', text: 'names are trimmed', checked: false }],
      player_claims: ['AC-003'],
      coach_evidence: [
        { criterion: 'AC-003', test: 'trims names before greeting' },
        { criterion: 'AC-003', test: 'greets by name' },
      ],
      require_evidence: true,
      files: new Map([['src/greet.js', 'export function greet() {}\n']]),
      passed_tests: ['greets by name'],
    };
    const mixed = evaluateRequirements({ ...input, promises: [] });
    expect(mixed.criteria[0]).toMatchObject({ status: 'verified' });
    expect(mixed.criteria[0]!.evidence.map((check) => check.valid)).toEqual([false, true]);
    const promised = evaluateRequirements({
      ...input,
      promises: [{ criterion_id: 'AC-003', implementation_files: ['src/gone.js'] }],
    });
    expect(promised.criteria[0]).toMatchObject({ status: 'claimed_unverified' });
  });
});
