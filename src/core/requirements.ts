import { matchCriterion } from './criterion-match.js';
import { enclosingTest } from './enclosing-test.js';
import { checkNamedTest, type FailuresOnlyRun } from './failures-only-run.js';
import type { AcceptanceCriterion } from './task.js';
import { isCompletePromise, type CompletionPromise } from './task-work-results.js';
import { isTestSideFile } from './test-paths.js';

/** One piece of evidence for a criterion: a place in a file, a passed test, or both. */
export interface EvidenceInput {
  criterion: string;
  file?: string;
  /** 1-based. */
  line?: number;
  snippet?: string;
  test?: string;
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
  /** Ids of the PASSED tests of the latest stored run for the task; null = no run stored. */
  passed_tests: string[] | null;
  /** False when the latest run has counts only (tests_source "none"): a test id cannot be checked. */
  latest_run_lists_tests?: boolean;
  /** The latest run names failing tests only (uvu): a cited test is checked against its files. */
  failures_only?: FailuresOnlyRun;
  /**
   * Ids that passed when the Player's tests ran on the BASE code (the fail-to-pass run); null when no such
   * run was made. A cited test in this list does not exercise the change.
   */
  passing_on_base_code?: string[] | null;
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
    | 'passed_tests'
    | 'passing_on_base_code'
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
  // Code in a test file or test helper can say anything without the product doing it: a place
  // inside a test counts as that test, which must have passed; anywhere else it never counts.
  const cited =
    file !== undefined && test === undefined && isTestSideFile(file)
      ? citedTest(file, item, context.files)
      : undefined;
  if (
    file !== undefined &&
    isTestSideFile(file) &&
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
  const checked = test ?? cited;
  if (checked !== undefined) {
    const outcome = checkTest(
      checked,
      inFile(context.passed_tests, test === undefined ? file : undefined),
      context.latest_run_lists_tests ?? true,
      context.failures_only,
    );
    if (!outcome.ok) problems.push(outcome.problem);
    else {
      matchedTest = outcome.id;
      if (context.passing_on_base_code?.includes(outcome.id)) {
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
    source,
    valid: problems.length === 0,
    ...(problems.length > 0 ? { problem: problems.join('; ') } : {}),
    ...(matchedTest !== undefined ? { matched_test: matchedTest } : {}),
  };
}

/** The test enclosing a cited line (or the first line of a cited snippet) of a test file. */
function citedTest(
  file: string,
  item: EvidenceInput,
  files: ReadonlyMap<string, string | null>,
): string | undefined {
  const content = files.get(file);
  if (!content) return undefined;
  const snippet = nonBlank(item.snippet)?.split('\n')[0]?.trim();
  const line =
    item.line ??
    (snippet ? splitLines(content).findIndex((text) => text.includes(snippet)) + 1 : 0);
  return line > 0 ? enclosingTest(file, content, line) : undefined;
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

type TestOutcome = { ok: true; id: string } | { ok: false; problem: string };

/**
 * The id among `ids` that is `test`, or ends with it right after a separator: how a cited test is
 * found. mocha's TAP joins a test's titles with spaces (`sum adds`) where its xunit and spec ids
 * use ` > ` (`sum > adds`): the whole path cited either way finds it.
 */
export function findTestId(test: string, ids: readonly string[]): string | undefined {
  const spaced = (id: string) => id.split(' > ').join(' ');
  return (
    ids.find((id) => id === test) ??
    ids.find((id) => TEST_ID_SEPARATORS.some((separator) => id.endsWith(separator + test))) ??
    ids.find((id) => spaced(id) === spaced(test))
  );
}

/** A passed test whose id is the given value, or ends with it right after a separator. */
function checkTest(
  test: string,
  passedTests: readonly string[] | null,
  runListsTests: boolean,
  failuresOnly: FailuresOnlyRun | undefined,
): TestOutcome {
  if (passedTests === null)
    return {
      ok: false,
      problem: 'no stored test run for this task: run run_independent_tests first',
    };
  if (!runListsTests && failuresOnly) return checkNamedTest(test, failuresOnly);
  if (!runListsTests) {
    return {
      ok: false,
      problem: `test ${test} cannot be checked: this run has no per-test results (counts only); cite a file + line + snippet`,
    };
  }
  const id = findTestId(test, passedTests);
  return id === undefined
    ? { ok: false, problem: `test ${test} did not pass in the latest run` }
    : { ok: true, id };
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
