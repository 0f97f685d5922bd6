import path from 'node:path';
import { matchCriterion } from './criterion-match.js';
import { enclosingTest, snapshotOwner, type EnclosingTest } from './enclosing-test.js';
import { checkNamedTest, type FailuresOnlyRun } from './failures-only-run.js';
import type { AcceptanceCriterion } from '../tasks/task.js';
import { isCompletePromise, type CompletionPromise } from '../tasks/task-work-results.js';
import { isTestSideFile } from '../scope/test-paths.js';

/** One piece of evidence for a criterion: a place in a file, a passed test, or both. */
export interface EvidenceInput {
  criterion: string;
  file?: string;
  /** 1-based. */
  line?: number;
  snippet?: string;
  test?: string;
  /** The criterion keeps a base behaviour: `test` is a base test, not one that fails on the base code. */
  kept?: boolean;
}

export type EvidenceSource = 'coach' | 'player_promise';

export interface EvidenceCheck extends EvidenceInput {
  source: EvidenceSource;
  valid: boolean;
  /** Every reason the item is invalid, joined with "; ". */
  problem?: string;
  /** The id of the passed test that `test` matched. */
  matched_test?: string;
}

export type CriterionStatus = 'verified' | 'claimed_unverified' | 'missing';

export interface CriterionReport {
  id: string;
  text: string;
  status: CriterionStatus;
  claimed_by: ('player' | 'coach')[];
  evidence: EvidenceCheck[];
}

export interface RequirementsReport {
  criteria_total: number;
  criteria_met: number;
  /** False when the task has no criteria: there is nothing to approve against. */
  all_criteria_met: boolean;
  criteria: CriterionReport[];
  /** Ids of the criteria not met. */
  missing: string[];
  /** Player claims and Coach evidence criteria that name no criterion of the task. */
  unmatched_claims: string[];
}

export interface RequirementsInput {
  criteria: AcceptanceCriterion[];
  /** requirements_met ∪ requirements_addressed ∪ complete promises' ids/texts. */
  player_claims: string[];
  promises: CompletionPromise[];
  coach_evidence: EvidenceInput[];
  /** When false, a claimed but unverified criterion still counts as met. */
  require_evidence: boolean;
  /** Keyed by the paths filesToRead returned; null = missing or outside the worktree. */
  files: ReadonlyMap<string, string | null>;
  /** The same files with comments and docstrings blanked (lines kept): snippets must match code. */
  code_only?: ReadonlyMap<string, string | null>;
  /**
   * The other Go test files of each cited Go test file's directory, by repository path: a suite's
   * runner (`suite.Run(t, new(S))`) may sit in another file of the package than its methods.
   */
  package_tests?: ReadonlyMap<string, string>;
  /** Ids of the PASSED tests of the latest stored run for the task; null = no run stored. */
  passed_tests: string[] | null;
  /** Ids that failed or errored in that run: a Go test counts through its subtests only if none did. */
  failed_tests?: string[];
  /** False when the latest run has counts only (tests_source "none"): a test id cannot be checked. */
  latest_run_lists_tests?: boolean;
  /** The latest run names failing tests only (uvu): a cited test is checked against its files. */
  failures_only?: FailuresOnlyRun;
  /**
   * Ids that passed when the Player's tests ran on the BASE code (the fail-to-pass run); null when no such
   * run was made. A cited test in this list does not exercise the change.
   */
  passing_on_base_code?: string[] | null;
  /**
   * Base tests that passed at the base and in the trusted run, among those kept evidence cites;
   * null when no trusted runs were made (validate_requirements).
   */
  kept_base_tests?: string[] | null;
}

/** Context lines either side of `line` within which a snippet must appear. */
const SNIPPET_WINDOW = 3;
/** How test runners join the parts of a test id (pytest, vitest/jest, go subtests, junit classes). */
const TEST_ID_SEPARATORS = ['::', ' > ', '/', '.'];

/** The files whose content evaluateRequirements needs, each once, in first-seen order, spelled as given. */
export function filesToRead(
  evidence: readonly EvidenceInput[],
  promises: readonly CompletionPromise[],
): string[] {
  const files = [...evidence, ...promiseEvidence(completePromises(promises))].map((item) =>
    nonBlank(item.file),
  );
  return [...new Set(files.filter((file): file is string => file !== undefined))];
}

/**
 * Checks every claim and piece of evidence against the task's criteria, the worktree's files and the
 * latest stored test run. A criterion is verified only by valid evidence and no evidence against it; a
 * claim alone leaves it claimed_unverified, which counts as met only when evidence is not required.
 */
export function evaluateRequirements(input: RequirementsInput): RequirementsReport {
  const { criteria } = input;
  const promised = completePromises(input.promises);
  const claimedByPlayer = new Set<AcceptanceCriterion>();
  const claimedByCoach = new Set<AcceptanceCriterion>();
  const evidenceFor = new Map<AcceptanceCriterion, EvidenceCheck[]>(
    criteria.map((criterion) => [criterion, []]),
  );
  const unmatched = new Set<string>();
  const attach = (claim: string, onMatch: (criterion: AcceptanceCriterion) => void) => {
    const criterion = matchCriterion(claim, criteria);
    if (criterion) onMatch(criterion);
    else if (claim.trim() !== '') unmatched.add(claim.trim());
  };

  for (const claim of [...input.player_claims, ...promised.map(promiseLabel)]) {
    attach(claim, (criterion) => claimedByPlayer.add(criterion));
  }
  for (const item of input.coach_evidence) {
    attach(item.criterion, (criterion) => {
      claimedByCoach.add(criterion);
      evidenceFor.get(criterion)!.push(checkEvidence(item, 'coach', input));
    });
  }
  for (const item of promiseEvidence(promised)) {
    const criterion = matchCriterion(item.criterion, criteria);
    const checks = criterion && evidenceFor.get(criterion)!;
    if (
      checks &&
      !checks.some((check) => check.source === 'player_promise' && check.file === item.file)
    ) {
      checks.push(checkEvidence(item, 'player_promise', input));
    }
  }

  const reports = criteria.map((criterion): CriterionReport => {
    const evidence = evidenceFor.get(criterion)!;
    const claimed_by = [
      ...(claimedByPlayer.has(criterion) ? ['player' as const] : []),
      ...(claimedByCoach.has(criterion) ? ['coach' as const] : []),
    ];
    // A Player promise that does not hold (a promised file that does not exist) contradicts the claim.
    // A Coach item that does not hold is reported beside the rest and hides no valid one: leaving it
    // out would give the same result, so counting it against the criterion protects nothing.
    // A promise whose files merely exist proves nothing by itself: some evidence must check code or a test.
    const verified =
      evidence.some((check) => check.valid && provesSomething(check)) &&
      evidence.every((check) => check.valid || check.source === 'coach');
    const status: CriterionStatus = verified
      ? 'verified'
      : claimed_by.length > 0 || evidence.length > 0
        ? 'claimed_unverified'
        : 'missing';
    return { id: criterion.id, text: criterion.text, status, claimed_by, evidence };
  });
  const isMet = (report: CriterionReport) =>
    report.status === 'verified' ||
    (!input.require_evidence && report.status === 'claimed_unverified');
  const met = reports.filter(isMet).length;
  return {
    criteria_total: criteria.length,
    criteria_met: met,
    all_criteria_met: criteria.length > 0 && met === criteria.length,
    criteria: reports,
    missing: reports.filter((report) => !isMet(report)).map((report) => report.id),
    unmatched_claims: [...unmatched],
  };
}

/** Promises the Player marks complete (no status means complete) that name a criterion. */
function completePromises(promises: readonly CompletionPromise[]): CompletionPromise[] {
  return promises.filter((promise) => isCompletePromise(promise) && promiseLabel(promise) !== '');
}

/** The criterion a promise names: its id, else its text — the same label the Player's claims use. */
function promiseLabel(promise: CompletionPromise): string {
  return promise.criterion_id ?? promise.criterion_text ?? '';
}

/** Each promise's test file and implementation files, as file evidence for the criterion it names. */
function promiseEvidence(promises: readonly CompletionPromise[]): EvidenceInput[] {
  return promises.flatMap((promise) => {
    const files = [promise.test_file, ...(promise.implementation_files ?? [])].map(nonBlank);
    return [...new Set(files.filter((file): file is string => file !== undefined))].map((file) => ({
      criterion: promiseLabel(promise),
      file,
    }));
  });
}

function provesSomething(check: EvidenceCheck): boolean {
  return check.source === 'coach' || check.test !== undefined || check.snippet !== undefined;
}

function checkEvidence(
  item: EvidenceInput,
  source: EvidenceSource,
  context: Pick<
    RequirementsInput,
    | 'files'
    | 'code_only'
    | 'package_tests'
    | 'passed_tests'
    | 'failed_tests'
    | 'passing_on_base_code'
    | 'kept_base_tests'
    | 'latest_run_lists_tests'
    | 'failures_only'
  >,
): EvidenceCheck {
  const file = nonBlank(item.file);
  const test = nonBlank(item.test);
  const problems: string[] = [];
  let matchedTest: string | undefined;
  if (file === undefined && test === undefined)
    problems.push('evidence needs a file (with line/snippet) or a passed test');
  else if (file === undefined && (item.line !== undefined || nonBlank(item.snippet) !== undefined))
    problems.push('line/snippet need a file to be checked against');
  if (item.kept && test === undefined)
    problems.push('kept evidence names the base test that pins the behaviour in `test`');
  // Code in a test file or test helper can say anything without the product doing it: a place
  // inside a test counts as that test, which must have passed; anywhere else it never counts. Rust
  // keeps unit tests inside its sources: a place inside one of those is that test too.
  const testSide =
    file !== undefined && (isTestSideFile(file) || snapshotOwner(file) !== undefined);
  const cited =
    file !== undefined && test === undefined && (testSide || file.endsWith('.rs'))
      ? citedTest(file, item, context.files, context.package_tests)
      : undefined;
  if (
    testSide &&
    cited === undefined &&
    (item.line !== undefined || nonBlank(item.snippet) !== undefined)
  )
    problems.push(
      `${file}${item.line !== undefined ? `:${item.line}` : ''} is not inside a test (a test helper, fixture or config, or outside every test function): a file/line/snippet there never shows the product does it; cite the product code, a line inside a test, or a test that passed`,
    );
  else if (file !== undefined)
    problems.push(
      ...fileProblems(
        file,
        item.line,
        item.snippet,
        context.files,
        context.code_only?.get(file) ?? undefined,
      ),
    );
  const checked = test ?? cited?.test;
  if (checked !== undefined) {
    const outcome = checkTest(
      checked,
      inFile(context.passed_tests, cited?.file),
      context.latest_run_lists_tests ?? true,
      context.failures_only,
      context.failed_tests ?? [],
    );
    if (!outcome.ok) problems.push(outcome.problem);
    else {
      matchedTest = outcome.id;
      const onBase = context.passing_on_base_code;
      if (item.kept) problems.push(...keptProblems(checked, context.kept_base_tests));
      else if (onBase && outcome.members.every((id) => onBase.includes(id))) {
        problems.push(
          `test ${outcome.id} also passes on the base code (fail-to-pass run: your tests on the base code), so it does not exercise the change: cite or write a test that fails without it`,
        );
      }
    }
  }
  return {
    criterion: item.criterion,
    ...(item.file !== undefined ? { file: item.file } : {}),
    ...(item.line !== undefined ? { line: item.line } : {}),
    ...(item.snippet !== undefined ? { snippet: item.snippet } : {}),
    ...(item.test !== undefined ? { test: item.test } : {}),
    ...(item.kept ? { kept: true } : {}),
    source,
    valid: problems.length === 0,
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
    ...(matchedTest !== undefined ? { matched_test: matchedTest } : {}),
  };
}

/** Why a test cited for a kept behaviour does not show the base's behaviour is kept. */
function keptProblems(test: string, kept: readonly string[] | null | undefined): string[] {
  if (!kept)
    return [
      `kept behaviour (test ${test}) is checked against the trusted runs, which only record_verdict approve makes`,
    ];
  if (findTestId(test, kept) !== undefined) return [];
  return [
    `test ${test} is not a base test that passed at the base and in the trusted run (the base's tests on your code): a kept behaviour is shown by a base test that still passes`,
  ];
}

/** The test enclosing a cited line (or the first line of a cited snippet) of a test file. */
function citedTest(
  file: string,
  item: EvidenceInput,
  files: ReadonlyMap<string, string | null>,
  packageTests: ReadonlyMap<string, string> = new Map(),
): EnclosingTest | undefined {
  const content = files.get(file);
  if (!content) return undefined;
  const snippet = nonBlank(item.snippet)?.split('\n')[0]?.trim();
  const line =
    item.line ??
    (snippet ? splitLines(content).findIndex((text) => text.includes(snippet)) + 1 : 0);
  const own = path.posix.normalize(file);
  const beside = [...packageTests]
    .filter(([name]) => name !== own && path.posix.dirname(name) === path.posix.dirname(own))
    .map(([, text]) => text);
  return line > 0 ? enclosingTest(file, content, line, beside) : undefined;
}

/** Passed ids of one file when the runner's ids name files (pytest, vitest, jest); else all. */
function inFile(ids: string[] | null, file: string | undefined): string[] | null {
  if (ids === null || file === undefined) return ids;
  const own = ids.filter((id) => id.startsWith(`${file}::`) || id.startsWith(`${file} > `));
  return own.length > 0 ? own : ids;
}

function fileProblems(
  file: string,
  line: number | undefined,
  snippet: string | undefined,
  files: ReadonlyMap<string, string | null>,
  code?: string,
): string[] {
  const content = files.get(file);
  if (content === undefined || content === null) return [`file not found in the worktree: ${file}`];
  const lines = splitLines(content);
  if (line !== undefined) {
    if (!Number.isInteger(line) || line < 1)
      return [`line ${line} is not a line number (lines start at 1)`];
    if (line > lines.length)
      return [`line ${line} is beyond the end of ${file} (${lines.length} lines)`];
  }
  if (snippet === undefined) return [];
  const wanted = collapseWhitespace(snippet);
  if (wanted === '') return ['snippet is empty'];
  // Joining the window's lines lets a snippet span consecutive lines; it must lie wholly inside the window.
  const inWindow = (all: string[]) =>
    collapseWhitespace(
      (line === undefined
        ? all
        : all.slice(Math.max(0, line - 1 - SNIPPET_WINDOW), line + SNIPPET_WINDOW)
      ).join('\n'),
    ).includes(wanted);
  if (inWindow(lines)) {
    if (code === undefined || inWindow(splitLines(code))) return [];
    return [
      `snippet matches only a comment or docstring in ${file}, not code: cite the code that does it`,
    ];
  }
  return [
    line === undefined
      ? `snippet not found in ${file}`
      : `snippet not found within ${SNIPPET_WINDOW} lines of line ${line} in ${file}`,
  ];
}

/** `members`: the passed ids the test stands for, itself or its subtests. */
type TestOutcome = { ok: true; id: string; members: string[] } | { ok: false; problem: string };

/**
 * The id among `ids` that is `test`, or ends with it right after a separator: how a cited test is
 * found. mocha's TAP joins a test's titles with spaces (`sum adds`) where its xunit and spec ids
 * use ` > ` (`sum > adds`): the whole path cited either way finds it.
 */
export function findTestId(test: string, ids: readonly string[]): string | undefined {
  const spaced = (id: string) => id.split(' > ').join(' ');
  // jest's snapshot keys join a test's titles with spaces, without its file.
  const titles = (id: string) => spaced(id.split(' > ').slice(1).join(' > '));
  return (
    ids.find((id) => id === test) ??
    ids.find((id) => TEST_ID_SEPARATORS.some((separator) => id.endsWith(separator + test))) ??
    ids.find((id) => spaced(id) === spaced(test)) ??
    ids.find((id) => id.includes(' > ') && titles(id) === spaced(test))
  );
}

/** A passed test whose id is the given value, or ends with it right after a separator. */
function checkTest(
  test: string,
  passedTests: readonly string[] | null,
  runListsTests: boolean,
  failuresOnly: FailuresOnlyRun | undefined,
  failedTests: readonly string[],
): TestOutcome {
  if (passedTests === null)
    return {
      ok: false,
      problem: 'no stored test run for this task: run run_independent_tests first',
    };
  if (!runListsTests && failuresOnly) {
    const outcome = checkNamedTest(test, failuresOnly);
    return outcome.ok ? { ...outcome, members: [outcome.id] } : outcome;
  }
  if (!runListsTests) {
    return {
      ok: false,
      problem: `test ${test} cannot be checked: this run has no per-test results (counts only); cite a file + line + snippet`,
    };
  }
  const id = findTestId(test, passedTests);
  if (id !== undefined) return { ok: true, id, members: [id] };
  return (
    subtestsPassed(test, passedTests, failedTests) ?? {
      ok: false,
      problem: `test ${test} did not pass in the latest run`,
    }
  );
}

/**
 * A Go test with subtests is reported through them (`pkg/TestX/case`): it passed when some of them
 * passed and none failed.
 */
function subtestsPassed(
  test: string,
  passed: readonly string[],
  failed: readonly string[],
): TestOutcome | undefined {
  const under = (id: string) => id.startsWith(`${test}/`) || id.includes(`/${test}/`);
  const members = passed.filter(under);
  if (members.length === 0) return undefined;
  const failing = failed.filter(under);
  if (failing.length > 0)
    return {
      ok: false,
      problem: `test ${test} did not pass in the latest run: ${failing[0]} failed`,
    };
  const id = members[0]!;
  const at = id.startsWith(`${test}/`) ? 0 : id.indexOf(`/${test}/`) + 1;
  return { ok: true, id: id.slice(0, at + test.length), members };
}

/** Lines of a file; a final newline ends the last line rather than starting an empty one. */
function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  return lines;
}

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The trimmed value, or undefined when absent or blank. */
function nonBlank(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
