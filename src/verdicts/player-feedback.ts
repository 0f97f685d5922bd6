import type { RunRecord } from '../records/run-record.js';
import type { VerdictIssue } from './verdict-entry.js';
import {
  codeBlock,
  evidenceLabel,
  inlineCode,
  issueItem,
  quote,
  shorten,
  type RequirementCheck,
} from './verdict-markdown.js';

export interface PlayerFeedbackInput {
  /** The Coach turn this feedback comes from. */
  turn: number;
  rationale: string;
  /** The verdict's issues; `info` ones are never shown to the Player. */
  issues: VerdictIssue[];
  /** The latest independent run for the task, or null when none is stored. */
  latest_run:
    | (Pick<RunRecord, 'status' | 'summary' | 'failure_class' | 'advice'> & {
        failing_tests: string[];
      })
    | null;
  requirements: RequirementCheck[];
}

/** Soft limit: the text is cut down to it, but every must-fix item stays. */
export const FEEDBACK_MAX_CHARS = 4000;
const FAILING_TESTS_SHOWN = 10;

/** How much of each part is shown; reduced step by step until the text fits. */
interface Detail {
  coach_note: boolean;
  should_fix_shown: number;
  criterion_evidence: boolean;
  failing_tests_shown: number;
  summary_chars: number;
  /** 0 leaves the criterion text out. */
  criterion_text_chars: number;
  issue_chars: number;
}

/**
 * What the next Player turn needs, most important first: must-fix items with location and suggestion,
 * should-fix items, the error from the latest test run, unmet acceptance criteria. When that is too long
 * the least important parts are cut first; must-fix items are never dropped.
 */
export function feedbackForPlayer(input: PlayerFeedbackInput): string {
  const full: Detail = {
    coach_note: true,
    should_fix_shown: input.issues.filter((issue) => issue.severity === 'should_fix').length,
    criterion_evidence: true,
    failing_tests_shown: FAILING_TESTS_SHOWN,
    summary_chars: Infinity,
    criterion_text_chars: Infinity,
    issue_chars: Infinity,
  };
  let text = render(input, full);
  for (const detail of lessDetail(full)) {
    if (text.length <= FEEDBACK_MAX_CHARS) break;
    text = render(input, detail);
  }
  return text;
}

/** Least important first: the Coach's note, should-fix items, evidence details, test ids, then ever shorter text. */
function* lessDetail(full: Detail): Generator<Detail> {
  let detail = full;
  const reduce = (change: Partial<Detail>): Detail => (detail = { ...detail, ...change });
  yield reduce({ coach_note: false });
  while (detail.should_fix_shown > 0)
    yield reduce({ should_fix_shown: detail.should_fix_shown - 1 });
  yield reduce({ criterion_evidence: false });
  for (const count of [3, 0]) yield reduce({ failing_tests_shown: count });
  yield reduce({ summary_chars: 800 });
  yield reduce({ criterion_text_chars: 80 });
  yield reduce({ issue_chars: 400 });
  yield reduce({ summary_chars: 400 });
  // The Player has the task file; the criterion ids and why they are unmet are what it cannot see there.
  yield reduce({ criterion_text_chars: 0 });
  yield reduce({ issue_chars: 200 });
}

function render(input: PlayerFeedbackInput, detail: Detail): string {
  const mustFix = input.issues.filter((issue) => issue.severity === 'must_fix');
  const shouldFix = input.issues.filter((issue) => issue.severity === 'should_fix');
  const unmet = input.requirements.filter((requirement) => requirement.status !== 'verified');
  const runFailed = input.latest_run !== null && input.latest_run.status !== 'passed';
  const sections = [`## Coach feedback (turn ${input.turn})`];
  if (mustFix.length > 0)
    sections.push(
      `### Must fix (${mustFix.length})\n\n${issueList(mustFix, mustFix.length, detail.issue_chars)}`,
    );
  if (shouldFix.length > 0)
    sections.push(
      `### Should fix (${shouldFix.length})\n\n${issueList(shouldFix, detail.should_fix_shown, detail.issue_chars)}`,
    );
  sections.push(runSection(input.latest_run, detail));
  if (unmet.length > 0) sections.push(criteriaSection(unmet, detail));
  if (mustFix.length + shouldFix.length + unmet.length === 0 && !runFailed)
    sections.push(checkedSection(input));
  if (detail.coach_note && input.rationale.trim() !== '')
    sections.push(`### Coach's note\n\n${quote(input.rationale)}`);
  return `${sections.join('\n\n')}\n`;
}

function issueList(issues: VerdictIssue[], shown: number, maxChars: number): string {
  const items = issues.slice(0, shown).map((issue, index) => issueItem(issue, index + 1, maxChars));
  const omitted = issues.length - shown;
  if (omitted > 0)
    items.push(`(${omitted}${shown > 0 ? ' more' : ''} omitted to keep this feedback short.)`);
  return items.join('\n');
}

function runSection(run: PlayerFeedbackInput['latest_run'], detail: Detail): string {
  if (run === null)
    return '### Latest independent test run: none recorded\n\nThe tests have not been run independently for this task yet.';
  if (run.status === 'passed') return '### Latest independent test run: passed';
  const parts = [
    `### Latest independent test run: ${run.status} (failure class: ${run.failure_class})`,
  ];
  if (run.advice.trim() !== '') parts.push(`Advice: ${run.advice.trim()}`);
  if (run.failing_tests.length > 0)
    parts.push(failingTestList(run.failing_tests, detail.failing_tests_shown));
  if (run.summary.trim() !== '')
    parts.push(
      `Output (first error and result):\n\n${codeBlock(shorten(run.summary.trim(), detail.summary_chars))}`,
    );
  return parts.join('\n\n');
}

function failingTestList(tests: string[], shown: number): string {
  if (shown === 0)
    return `Failing tests: ${tests.length} (not listed, to keep this feedback short).`;
  const lines = [
    `Failing tests (${tests.length}):`,
    ...tests.slice(0, shown).map((id) => `- ${inlineCode(id)}`),
  ];
  if (tests.length > shown) lines.push(`- … and ${tests.length - shown} more`);
  return lines.join('\n');
}

function criteriaSection(unmet: RequirementCheck[], detail: Detail): string {
  const items = unmet.map((requirement) => {
    const invalid = requirement.evidence.filter((item) => !item.valid);
    const why =
      requirement.status === 'missing'
        ? 'missing: not claimed, no evidence'
        : invalid.length > 0
          ? 'claimed, but the evidence does not hold'
          : 'claimed without evidence';
    const text =
      detail.criterion_text_chars > 0
        ? `: ${shorten(requirement.text.trim(), detail.criterion_text_chars)}`
        : '';
    const lines = [`- **${requirement.id}**${text} (${why})`];
    if (detail.criterion_evidence) {
      lines.push(
        ...invalid.map(
          (item) => `  - ${inlineCode(evidenceLabel(item))}: ${item.problem ?? 'not valid'}`,
        ),
      );
    }
    return lines.join('\n');
  });
  return [
    `### Unmet acceptance criteria (${unmet.length})`,
    'Each needs evidence the Coach can check: a file and line that implement it, or a test that passes in the independent run.',
    items.join('\n'),
  ].join('\n\n');
}

/** Said when there is nothing specific to fix, so the Player never gets a bare "not approved". */
function checkedSection(input: PlayerFeedbackInput): string {
  const verified = input.requirements.filter(
    (requirement) => requirement.status === 'verified',
  ).length;
  const run =
    input.latest_run === null
      ? 'no independent test run is stored'
      : `the latest independent test run ${input.latest_run.status}`;
  return [
    '### What was checked',
    'No specific defect was reported. Checked:',
    `- Tests: ${run}.`,
    `- Acceptance criteria: ${verified} of ${input.requirements.length} verified.`,
    '- Issues: none of must_fix or should_fix severity.',
  ].join('\n');
}
