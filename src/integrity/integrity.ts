import path from 'node:path';
import { findTestId } from '../requirements/requirements.js';
import { testDataFindings } from '../scope/test-data.js';
import { isTestFile } from '../scope/test-paths.js';
import {
  doctestFileFindings,
  doctestFindings,
  type DoctestsRun,
  type ParsedDoctests,
} from './doctest-examples.js';
import { harnessReachFindings } from './harness-reach.js';
import { runnerDetectionFindings } from './runner-detection.js';
import {
  acknowledgesInput,
  specialCasedInputFindings,
  type TestInputFacts,
} from './special-cased-inputs.js';
import {
  matchSuccessors,
  successorOutcome,
  type LocatedTest,
  type TestSuccessor,
} from './test-successors.js';
import type {
  FileVersions,
  TestCase,
  TestFileFacts,
  ConfigSettings,
  BaseAndNow,
  IntegrityFindingKind,
  IntegrityFinding,
} from './integrity-types.js';
export type * from './integrity-types.js';

/**
 * What the runs said about a finding: harm the trusted run confirmed (blocks), a gone base test the
 * Player's suite no longer runs in any form (blocks), or a change the runs explained away.
 */
export interface TrustedRunVerdict {
  outcome: 'confirmed' | 'not_replaced' | 'explained';
  detail: string;
}

/** A finding once the trusted run has been made: `info` where running settled what it suspected. */
export type ExplainedFinding = Omit<IntegrityFinding, 'severity'> & {
  severity: IntegrityFinding['severity'] | 'info';
  trusted_run?: TrustedRunVerdict;
};

/** The runs' evidence a finding is judged by. */
export interface TrustedRunEvidence {
  /** Base tests that passed at the base and not in the trusted run (base tests on the Player's code). */
  regressions: { test: string; outcome: string }[];
  /** Test ids (or tails) the Coach acknowledged as changed by a criterion. */
  acknowledged: string[];
  /** The latest run of this tree in the worktree: whether a moved or renamed test still runs. */
  candidate_tests: readonly { id: string; status: string }[];
  /**
   * Base tests that passed at the base and are not in the Player's run under their id. A gone test
   * not among them did not pass at the base, so its successor need not pass either. Unknown (older
   * records): every gone test must be carried on.
   */
  gone_from_player_run?: readonly string[];
}

/** Findings about base tests and test config that the trusted run settles by running the base versions. */
const SETTLED_BY_TRUSTED_RUN: ReadonlySet<IntegrityFindingKind> = new Set([
  'test_deleted',
  'test_file_deleted',
  'assertions_removed',
  'test_config_changed',
  'tests_count_dropped',
]);

/**
 * With the trusted runs made, a static finding blocks only where running confirms harm: the base's tests
 * and config ran against the Player's code. A deleted, moved, renamed or rewritten base test, an edited
 * config or a lower count is confirmed (must_fix) when a base test it concerns stopped passing. A gone
 * base test must also still run in the Player's own suite, under its new name or file (renamed, moved,
 * wrapped, parametrized), and pass there; one that no longer runs in any form stays must_fix
 * (not_replaced) unless the Coach acknowledged it. Otherwise the finding is an explanation (info). A
 * skip or focus only affects the Player's own copy (should_fix). Other findings keep their severity.
 */
export function explainWithTrustedRun(
  findings: IntegrityFinding[],
  evidence: TrustedRunEvidence,
): ExplainedFinding[] {
  const covered = coveredRegression(findings, evidence.acknowledged);
  const harmed = evidence.regressions.filter((regression) => !covered(regression));
  return findings.map((finding): ExplainedFinding => {
    if (SETTLED_BY_TRUSTED_RUN.has(finding.kind)) {
      const confirming = harmed.filter((regression) => concerns(finding, regression.test));
      if (confirming.length > 0) {
        return {
          ...finding,
          severity: 'must_fix',
          trusted_run: {
            outcome: 'confirmed',
            detail: `the trusted run confirms it: ${confirming
              .map((regression) => `${regression.test} ${regression.outcome}`)
              .join(', ')}`,
          },
        };
      }
      const lost = lostTests(finding, evidence);
      if (lost.length > 0) {
        return {
          ...finding,
          severity: 'must_fix',
          trusted_run: {
            outcome: 'not_replaced',
            detail: `the base version still passes against this code in the trusted run, but the Player's suite no longer runs ${listed(lost)}: restore it, or acknowledge its removal (record_verdict acknowledged_changes) if a criterion retires it`,
          },
        };
      }
      const successors = (finding.replaced_by ?? []).map(
        (item) => `\`${item.test}\` ${item.how} to \`${item.as}\` in ${item.file}`,
      );
      // An acknowledged failure is not harm, but the explanation must not say the test passes.
      const retired = evidence.regressions
        .filter((regression) => concerns(finding, regression.test))
        .map((regression) => `\`${regression.test}\` ${regression.outcome}`);
      return {
        ...finding,
        severity: 'info',
        detail: `${finding.detail} (explanation only: the base's own tests and config ran against this code in the trusted run)`,
        trusted_run: {
          outcome: 'explained',
          detail:
            (retired.length > 0
              ? `the base's tests and config ran against this code: ${listed(retired)} in the trusted run, which the Coach acknowledged as a criterion's change; every other base test that passed at the base still passes`
              : "the base's tests and config ran against this code and every base test that passed at the base still passes") +
            (successors.length > 0
              ? `; in the Player's run ${listed(successors)} ${successors.length === 1 ? 'passes' : 'pass'}`
              : ''),
        },
      };
    }
    if (finding.kind === 'doctest_changed' && acknowledges(evidence.acknowledged, finding.test!)) {
      return {
        ...finding,
        severity: 'info',
        trusted_run: {
          outcome: 'explained',
          detail: 'the Coach acknowledged this example as a change a criterion asks for',
        },
      };
    }
    if (
      finding.kind === 'special_cases_test_input' &&
      acknowledgesInput(evidence.acknowledged, finding.test!)
    ) {
      return {
        ...finding,
        severity: 'info',
        trusted_run: {
          outcome: 'explained',
          detail: 'the Coach acknowledged this value as one a criterion names',
        },
      };
    }
    if (finding.kind === 'skip_added' || finding.kind === 'focus_added') {
      return {
        ...finding,
        severity: 'should_fix',
        trusted_run: {
          outcome: 'explained',
          detail:
            "the trusted run used the base's test files, so this marker only shapes the Player's own run",
        },
      };
    }
    return finding;
  });
}

/**
 * The trusted run's harm no finding was confirmed by: a base test that passed at the base and fails (or
 * no longer runs) against the Player's code, as the approval guard will refuse it. What a run of this
 * tree says before the approval, so the Coach sees it with the findings.
 */
export function unexplainedRegressions(
  findings: IntegrityFinding[],
  evidence: Pick<TrustedRunEvidence, 'regressions' | 'acknowledged'>,
): IntegrityFinding[] {
  const settled = findings.filter((finding) => SETTLED_BY_TRUSTED_RUN.has(finding.kind));
  const covered = coveredRegression(findings, evidence.acknowledged);
  return evidence.regressions
    .filter(
      (regression) =>
        !covered(regression) && !settled.some((finding) => concerns(finding, regression.test)),
    )
    .map((regression) => ({
      kind: 'base_test_fails',
      severity: 'must_fix',
      file: fileOfTestId(regression.test),
      test: regression.test,
      detail: `base test \`${regression.test}\` passed at the base and ${regression.outcome === 'missing' ? 'did not run' : regression.outcome} in the trusted run (the base's tests and config on this code)`,
    }));
}

/**
 * Whether the Coach's acknowledgements cover a base test's outcome in the trusted run. A failure is
 * covered by acknowledging the test. A test that did not run is covered only when it belongs to a
 * test file the Player deleted and the Coach retired it (acknowledging the file, or the test): the
 * base's copy of a file whose subject the change removes cannot load, and nothing else can show what
 * a retired test would say. Any other test that did not run stays uncovered: nothing shows what it
 * would now say.
 */
export function coveredRegression(
  findings: readonly IntegrityFinding[],
  acknowledgedTests: string[],
): (regression: { test: string; outcome: string }) => boolean {
  const retired = findings
    .filter((finding) => finding.kind === 'test_file_deleted')
    .flatMap((finding) =>
      (finding.not_replaced ?? [])
        .filter((test) => retiresTest(finding, acknowledgedTests, test))
        .map((test) => ({ file: finding.file, test })),
    );
  return (regression) =>
    regression.outcome === 'missing'
      ? retired.some(
          ({ file, test }) =>
            findTestId(test, [regression.test]) !== undefined &&
            [file, '.'].includes(fileOfTestId(regression.test)),
        )
      : acknowledges(acknowledgedTests, regression.test);
}

/** `tests/t.py::test_x` → `tests/t.py`; a TAP id names no file: `.`. */
function fileOfTestId(id: string): string {
  const head = id.split(/::| > /)[0] ?? '';
  return /[/.]/.test(head) && !head.includes(' ') ? head : '.';
}

/**
 * The gone base tests a finding names that the Player's run does not carry on: no successor, or one
 * that did not pass in the Player's latest run. Acknowledged ones are not lost.
 */
function lostTests(finding: IntegrityFinding, evidence: TrustedRunEvidence): string[] {
  const notReplaced =
    finding.not_replaced ??
    (finding.kind === 'test_deleted' && !finding.replaced_by && finding.test ? [finding.test] : []);
  const carried = (test: string) =>
    retiresTest(finding, evidence.acknowledged, test) ||
    !passedAtBase(finding.file, test, evidence);
  const lost = notReplaced.filter((test) => !carried(test)).map((test) => `\`${test}\``);
  for (const successor of finding.replaced_by ?? []) {
    const outcome = successorOutcome(successor, evidence.candidate_tests);
    if (outcome !== 'passed' && !carried(successor.test))
      lost.push(`\`${successor.test}\` (as \`${successor.as}\` in ${successor.file}: ${outcome})`);
  }
  return lost;
}

/** Whether a gone base test passed at the base; assumed so when the evaluation does not say. */
function passedAtBase(file: string, test: string, evidence: TrustedRunEvidence): boolean {
  const gone = evidence.gone_from_player_run;
  if (gone === undefined) return true;
  const atBase = gone.map((id) => ({ id, status: 'passed' }));
  return successorOutcome({ file, as: test }, atBase) !== 'missing';
}

/** Whether a base test's id belongs to what a finding is about: its test, its file, or the whole suite. */
function concerns(finding: IntegrityFinding, testId: string): boolean {
  if (finding.kind === 'test_config_changed' || finding.kind === 'tests_count_dropped') return true;
  if (finding.test === undefined) return testId.startsWith(finding.file);
  // Matched as test evidence is: the id itself, or its tail after a separator.
  return findTestId(finding.test.split(/\.| > /).at(-1)!, [testId]) !== undefined;
}

/** Whether the Coach acknowledged a gone test: by name, or, for a deleted file, the whole file. */
function retiresTest(finding: IntegrityFinding, entries: string[], test: string): boolean {
  return (
    (finding.kind === 'test_file_deleted' && entries.includes(finding.file)) ||
    acknowledged(entries, finding.file, test)
  );
}

/**
 * Whether the Coach acknowledged a gone test a finding names by its bare name: an acknowledgement may
 * give the name or the full id (`tests/t.py::test_x`), which must then be of the finding's file.
 */
function acknowledged(entries: string[], file: string, test: string): boolean {
  return (
    acknowledges(entries, test) ||
    entries.some((entry) => findTestId(test, [entry]) !== undefined && entry.startsWith(file))
  );
}

/** Whether an acknowledgement names this test id, matched as test evidence is. */
export function acknowledges(acknowledged: string[], testId: string): boolean {
  return acknowledged.some((test) => findTestId(test, [testId]) !== undefined);
}

export interface IntegrityInput {
  files: FileVersions[];
  /** Test facts per path, for the paths `needsTestFacts` accepts. */
  facts: Map<string, BaseAndNow<TestFileFacts>>;
  /** Settings per path, for the paths `testConfigKind` recognises. */
  config_settings?: Map<string, BaseAndNow<ConfigSettings>>;
  task_file?: string;
  /** Top-level module/package names that belong to the project (`myapp`, `@acme/core`). */
  first_party_modules: string[];
  tests_at_base?: number;
  tests_now?: number;
  /** Files git ignores (.gitignore, .git/info/exclude) that the test runner still loads. */
  hidden_files?: string[];
  /** Product code (by the base's rules) the Player changed, base and now. */
  product_code?: FileVersions[];
  /** Which doctests the base runs (their examples in product code are base tests). */
  doctests_run?: DoctestsRun;
  /** Python examples as doctest's own parser reads them, per changed product file. */
  doctest_examples?: ParsedDoctests;
  /** The examples of the changed text files the base runs as doctests (DocFileSuite, testfile). */
  doctest_files?: ParsedDoctests;
  /** The tests' literals and the changed product files' literal uses. */
  test_inputs?: TestInputFacts;
}

const NARROWING_KEYS =
  /(?:^|\.)(?:exclude|testPathIgnorePatterns|testNamePattern|collect_ignore(?:_glob)?|norecursedirs)$/;
const NARROWING_FLAGS = new Set([
  '-k',
  '-m',
  '--deselect',
  '--ignore',
  '--ignore-glob',
  '--exclude',
  '-t',
  '--testNamePattern',
  '--testPathIgnorePatterns',
  '--test-name-pattern',
  '--test-skip-pattern',
  '--skip',
  '-skip',
  '-run',
  '--passWithNoTests',
]);

const NO_DOCTESTS: DoctestsRun = { python: false, rust: false };
const NO_INPUTS: TestInputFacts = { inputs: [], product: [] };

export function findIntegrityIssues(input: IntegrityInput): IntegrityFinding[] {
  const { compared, deleted } = pairTestFiles(input.files, input.facts);
  const findings = withSuccessors(
    [
      ...deleted.map((file) => testFileDeleted(file, input.facts.get(file)?.base)),
      ...compared.flatMap((unit) => compareTestFacts(unit, input.first_party_modules)),
      ...[...(input.config_settings ?? [])].flatMap(([file, settings]) =>
        compareConfigSettings(file, settings),
      ),
      ...taskFileModified(input.files, input.task_file),
      ...testsCountDropped(input.tests_at_base, input.tests_now),
      ...runnerDetectionFindings(input.product_code ?? []),
      ...harnessReachFindings(input.product_code ?? []),
      ...doctestFindings(
        input.product_code ?? [],
        input.doctests_run ?? NO_DOCTESTS,
        input.doctest_examples,
      ),
      ...doctestFileFindings(input.doctest_files ?? new Map()),
      ...specialCasedInputFindings(input.test_inputs ?? NO_INPUTS, input.product_code ?? []),
      ...testDataFindings(input.files),
      ...(input.hidden_files ?? []).map((file): IntegrityFinding => ({
        kind: 'hidden_from_git',
        severity: 'must_fix',
        file,
        detail:
          "git ignores this file but the test runner loads it, so it shapes the Player's own run unseen; the trusted runs leave it out. Delete it, or commit it so it can be reviewed",
      })),
    ],
    compared,
    deleted,
    input.facts,
  );
  return findings.sort(compareFindings);
}

/**
 * Gone base tests with what took their place: each `test_deleted`, and each test of a deleted file,
 * gets `replaced_by` (a successor found) or `not_replaced`. The severity stays: only runs can tell.
 */
function withSuccessors(
  findings: IntegrityFinding[],
  compared: ComparedFile[],
  deleted: string[],
  facts: Map<string, BaseAndNow<TestFileFacts>>,
): IntegrityFinding[] {
  const gone: LocatedTest[] = [];
  const added: LocatedTest[] = [];
  for (const unit of compared) {
    const base = unit.base?.tests ?? [];
    const now = unit.now?.tests ?? [];
    gone.push(...beyond(base, now).map((test) => ({ file: unit.file, test })));
    added.push(...beyond(now, base).map((test) => ({ file: unit.file, test })));
  }
  for (const file of deleted)
    gone.push(...(facts.get(file)?.base?.tests ?? []).map((test) => ({ file, test })));
  if (gone.length === 0) return findings;
  const successors = matchSuccessors(gone, added, new Set(deleted));
  const byTest = new Map<string, (TestSuccessor | undefined)[]>();
  gone.forEach(({ file, test }, index) => {
    const key = `${file}\0${test.name}`;
    byTest.set(key, [...(byTest.get(key) ?? []), successors[index]]);
  });
  const take = (file: string, name: string) => byTest.get(`${file}\0${name}`)?.shift();
  return findings.map((finding) => {
    const names =
      finding.kind === 'test_deleted' && finding.test !== undefined
        ? [finding.test]
        : finding.kind === 'test_file_deleted'
          ? (facts.get(finding.file)?.base?.tests ?? []).map((test) => test.name)
          : [];
    if (names.length === 0) return finding;
    const found = names.map((name) => ({ name, successor: take(finding.file, name) }));
    const replaced = found.flatMap((item) => (item.successor ? [item.successor] : []));
    const missing = found.filter((item) => !item.successor).map((item) => item.name);
    return {
      ...finding,
      ...(replaced.length > 0 ? { replaced_by: replaced } : {}),
      ...(missing.length > 0 ? { not_replaced: missing } : {}),
    };
  });
}

/** The tests of `a` beyond those of `b`, matched by name (the k-th of a name with the k-th). */
function beyond(a: TestCase[], b: TestCase[]): TestCase[] {
  const counts = new Map<string, number>();
  for (const test of b) counts.set(test.name, (counts.get(test.name) ?? 0) + 1);
  return a.filter((test) => {
    const left = counts.get(test.name) ?? 0;
    counts.set(test.name, left - 1);
    return left <= 0;
  });
}

function compareFindings(a: IntegrityFinding, b: IntegrityFinding): number {
  return (
    compareText(a.file, b.file) ||
    (a.line ?? 0) - (b.line ?? 0) ||
    compareText(a.kind, b.kind) ||
    compareText(a.detail, b.detail)
  );
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

interface ComparedFile {
  file: string;
  base?: TestFileFacts;
  now?: TestFileFacts;
  moved_from?: string;
}

/**
 * Deleted test files become `test_file_deleted`, unless a new file holds every test they had: that is a
 * move, compared as one file so an honest reorganisation is not reported as deletion.
 */
function pairTestFiles(
  files: FileVersions[],
  facts: Map<string, BaseAndNow<TestFileFacts>>,
): { compared: ComparedFile[]; deleted: string[] } {
  const deletedTestFiles = files
    .filter((f) => f.base !== undefined && f.now === undefined && isTestFile(f.path))
    .map((f) => f.path)
    .sort(compareText);
  const addedPaths = files
    .filter((f) => f.base === undefined && f.now !== undefined && facts.get(f.path)?.now)
    .map((f) => f.path)
    .sort(compareText);
  const movedFrom = new Map<string, string>();
  const deleted: string[] = [];
  for (const source of deletedTestFiles) {
    const sourceTests = facts.get(source)?.base?.tests.map((t) => t.name) ?? [];
    const target = addedPaths.find((candidate) => {
      if (movedFrom.has(candidate)) return false;
      const candidateTests = new Set(facts.get(candidate)?.now?.tests.map((t) => t.name));
      return sourceTests.length > 0 && sourceTests.every((name) => candidateTests.has(name));
    });
    if (target === undefined) deleted.push(source);
    else movedFrom.set(target, source);
  }
  const compared: ComparedFile[] = [];
  for (const [file, pair] of [...facts].sort(([a], [b]) => compareText(a, b))) {
    if (deletedTestFiles.includes(file)) continue;
    const source = movedFrom.get(file);
    if (source === undefined) compared.push({ file, base: pair.base, now: pair.now });
    else compared.push({ file, base: facts.get(source)?.base, now: pair.now, moved_from: source });
  }
  return { compared, deleted };
}

function testFileDeleted(file: string, base: TestFileFacts | undefined): IntegrityFinding {
  const names = base?.tests.map((t) => t.name) ?? [];
  const listed = names.length > 0 ? `; its tests were: ${summarise(names)}` : '';
  return {
    kind: 'test_file_deleted',
    severity: 'must_fix',
    file,
    detail: `test file present at base was deleted (${names.length} test(s))${listed}`,
  };
}

type FileFinding = Omit<IntegrityFinding, 'file'>;

function compareTestFacts(unit: ComparedFile, firstParty: string[]): IntegrityFinding[] {
  const base = unit.base ?? emptyFacts();
  const now = unit.now ?? emptyFacts();
  const suffix = detailSuffix(unit, base, now);
  const language = unit.file.endsWith('.py') ? 'python' : 'js';
  return [
    ...changedTests(base, now),
    ...addedMarkers(base, now),
    ...addedStubs(base, now, firstParty, language),
  ].map((finding) => ({ file: unit.file, ...finding, detail: finding.detail + suffix }));
}

/** Tests matched by name (the k-th of a name with the k-th): gone ones, and ones that lost assertions. */
function changedTests(base: TestFileFacts, now: TestFileFacts): FileFinding[] {
  const nowByName = groupBy(now.tests, (t) => t.name);
  return [...groupBy(base.tests, (t) => t.name)].flatMap(([name, baseTests]) =>
    baseTests.flatMap((baseTest, index): FileFinding[] => {
      const nowTest = nowByName.get(name)?.[index];
      if (nowTest === undefined) {
        return [
          {
            kind: 'test_deleted',
            severity: 'must_fix',
            test: name,
            detail: `test \`${name}\` (line ${baseTest.line} at base) no longer exists`,
          },
        ];
      }
      if (!assertionsDropped(baseTest.assertions, nowTest.assertions)) return [];
      return [
        {
          kind: 'assertions_removed',
          severity: 'should_fix',
          line: nowTest.line,
          test: name,
          detail: `assertions in test \`${name}\` dropped from ${baseTest.assertions} to ${nowTest.assertions}`,
        },
      ];
    }),
  );
}

const MARKER_RULES = [
  {
    kind: 'skip_added',
    occurrences: (facts: TestFileFacts) => facts.skips,
    why: 'a skipped test cannot fail',
  },
  {
    kind: 'focus_added',
    occurrences: (facts: TestFileFacts) => facts.focuses,
    why: 'a focused test makes the runner skip all the others',
  },
] as const;

function addedMarkers(base: TestFileFacts, now: TestFileFacts): FileFinding[] {
  return MARKER_RULES.flatMap((rule) =>
    newOccurrences(rule.occurrences(base), rule.occurrences(now), (o) => o.marker).map(
      ({ occurrence, counts }) => ({
        kind: rule.kind,
        severity: 'must_fix' as const,
        line: occurrence.line,
        detail: `adds \`${occurrence.marker}\`${testClause('to', occurrence.test)} (${counts}): ${rule.why}`,
      }),
    ),
  );
}

function addedStubs(
  base: TestFileFacts,
  now: TestFileFacts,
  firstParty: string[],
  language: 'python' | 'js',
): FileFinding[] {
  return newOccurrences(base.module_stubs, now.module_stubs, (o) => o.module).map(
    ({ occurrence }) => {
      const { module, via, line, test } = occurrence;
      const origin = moduleOrigin(module, firstParty, language);
      const what =
        origin === 'unknown'
          ? 'a module whose name is computed at runtime'
          : `${origin} module \`${module}\` wholesale` +
            (origin === 'first-party'
              ? ', so the tests exercise a stand-in instead of the project code'
              : '');
      return {
        kind: 'module_stubbed',
        severity: origin === 'first-party' ? 'must_fix' : 'should_fix',
        line,
        detail: `\`${via}\`${testClause('in', test)} replaces ${what}`,
      };
    },
  );
}

function emptyFacts(): TestFileFacts {
  return { tests: [], skips: [], focuses: [], module_stubs: [], parser: 'line_scan' };
}

function detailSuffix(unit: ComparedFile, base: TestFileFacts, now: TestFileFacts): string {
  const moved = unit.moved_from === undefined ? '' : ` (file moved from ${unit.moved_from})`;
  const reason = now.fallback_reason ?? base.fallback_reason;
  return moved + (reason === undefined ? '' : ` [found by a line scan because ${reason}]`);
}

function testClause(preposition: 'to' | 'in', test: string | undefined): string {
  return test === undefined ? '' : ` ${preposition} \`${test}\``;
}

/** Honest refactors move assertions into helpers too, so only a drop to zero or by half counts. */
function assertionsDropped(base: number, now: number): boolean {
  return base > 0 && now * 2 <= base;
}

/**
 * Occurrences of a key beyond the base count. Which of the `now` ones are new: first those whose enclosing
 * test has no counterpart at base, so moving code around reports nothing and adding reports the right line.
 */
function newOccurrences<T extends { line: number; test?: string }>(
  base: T[],
  now: T[],
  keyOf: (occurrence: T) => string,
): { occurrence: T; counts: string }[] {
  const baseByKey = groupBy(base, keyOf);
  const result: { occurrence: T; counts: string }[] = [];
  for (const [key, nowGroup] of groupBy(now, keyOf)) {
    const baseGroup = baseByKey.get(key) ?? [];
    const excess = nowGroup.length - baseGroup.length;
    if (excess <= 0) continue;
    const unmatchedContexts = baseGroup.map((o) => o.test);
    const unmatched: T[] = [];
    const matched: T[] = [];
    for (const occurrence of [...nowGroup].sort((a, b) => a.line - b.line)) {
      const index = unmatchedContexts.indexOf(occurrence.test);
      if (index === -1) unmatched.push(occurrence);
      else {
        unmatchedContexts.splice(index, 1);
        matched.push(occurrence);
      }
    }
    const counts = `${baseGroup.length} at base, ${nowGroup.length} now`;
    for (const occurrence of [...unmatched, ...matched].slice(0, excess))
      result.push({ occurrence, counts });
  }
  return result;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return groups;
}

function moduleOrigin(
  module: string,
  firstParty: string[],
  language: 'python' | 'js',
): 'first-party' | 'third-party' | 'unknown' {
  if (module === '<dynamic>') return 'unknown';
  if (language === 'js' && /^(?:\.{1,2}\/|\/|@\/|~\/)/.test(module)) return 'first-party';
  const topLevel =
    language === 'python'
      ? module.split('.')[0]
      : module
          .split('/')
          .slice(0, module.startsWith('@') ? 2 : 1)
          .join('/');
  return firstParty.includes(topLevel ?? '') ? 'first-party' : 'third-party';
}

function compareConfigSettings(
  file: string,
  settings: BaseAndNow<ConfigSettings>,
): IntegrityFinding[] {
  const existedAtBase = settings.base !== undefined;
  const base = settings.base ?? {};
  const now = settings.now ?? {};
  const keys = [...new Set([...Object.keys(base), ...Object.keys(now)])].sort(compareText);
  return keys
    .filter((key) => base[key] !== now[key])
    .map((key) => {
      const addedFlags = [...flagsIn(now[key])].filter((flag) => !flagsIn(base[key]).has(flag));
      const narrows = addedFlags.length > 0 || (NARROWING_KEYS.test(key) && now[key] !== undefined);
      const why =
        addedFlags.length > 0
          ? `; it adds ${addedFlags.join(', ')}, which narrows which tests run`
          : narrows
            ? '; it changes which tests are excluded'
            : '; it decides which tests run and how';
      return {
        kind: 'test_config_changed' as const,
        // A config created from nothing is often honest project setup, unless it starts by excluding tests.
        severity: existedAtBase || narrows ? ('must_fix' as const) : ('should_fix' as const),
        file,
        detail: `\`${key}\` changed from ${showValue(base[key])} to ${showValue(now[key])}${why}`,
      };
    });
}

function flagsIn(value: string | undefined): Set<string> {
  const tokens = (value ?? '').split(/[\s"'=,[\]]+/);
  return new Set(tokens.filter((token) => NARROWING_FLAGS.has(token)));
}

const SHOWN_VALUE_LENGTH = 120;

function showValue(value: string | undefined): string {
  if (value === undefined) return '(unset)';
  const shown =
    value.length > SHOWN_VALUE_LENGTH ? `${value.slice(0, SHOWN_VALUE_LENGTH)}…` : value;
  return `\`${shown}\``;
}

function taskFileModified(files: FileVersions[], taskFile: string | undefined): IntegrityFinding[] {
  if (taskFile === undefined) return [];
  const wanted = path.posix.normalize(taskFile.replace(/\\/g, '/'));
  const versions = files.find((f) => path.posix.normalize(f.path) === wanted);
  // Absent at base means the task file is not tracked in git, so there is nothing to compare against.
  if (versions?.base === undefined || versions.base === versions.now) return [];
  const why = 'the task file is the requirements contract neither agent may change';
  if (versions.now === undefined) {
    return [
      {
        kind: 'task_file_modified',
        severity: 'must_fix',
        file: versions.path,
        detail: `task file was deleted; ${why}`,
      },
    ];
  }
  return [
    {
      kind: 'task_file_modified',
      severity: 'must_fix',
      file: versions.path,
      line: firstDifferingLine(versions.base, versions.now),
      detail: `task file differs from the base commit; ${why}`,
    },
  ];
}

function firstDifferingLine(base: string, now: string): number {
  const baseLines = base.split('\n');
  const nowLines = now.split('\n');
  const index = nowLines.findIndex((line, i) => line !== baseLines[i]);
  return index === -1 ? nowLines.length : index + 1;
}

function testsCountDropped(
  atBase: number | undefined,
  now: number | undefined,
): IntegrityFinding[] {
  if (atBase === undefined || now === undefined || now >= atBase) return [];
  return [
    {
      kind: 'tests_count_dropped',
      severity: 'must_fix',
      file: '.',
      detail: `the suite ran ${atBase} test(s) at base and ${now} now`,
    },
  ];
}

const SUMMARISED_NAMES = 5;

function summarise(names: string[]): string {
  return listed(names.map((name) => `\`${name}\``));
}

function listed(items: string[]): string {
  const shown = items.slice(0, SUMMARISED_NAMES).join(', ');
  return items.length > SUMMARISED_NAMES
    ? `${shown} and ${items.length - SUMMARISED_NAMES} more`
    : shown;
}
