import type { VerdictIssue, VerdictLogEntry } from './verdict-entry.js';
import {
  evidenceLabel,
  inlineCode,
  issueItem,
  quote,
  shorten,
  tableCell,
  type RequirementCheck,
} from './verdict-markdown.js';

export interface ReviewInput {
  task_id: string;
  title: string;
  status: VerdictLogEntry['status'];
  strikes: number;
  max_strikes: number;
  turn: number;
  decision: VerdictLogEntry['decision'];
  rationale: string;
  /** The whole verdict log, refused approvals included. */
  history: VerdictLogEntry[];
  requirements: RequirementCheck[];
  /** The latest verdict's issues. */
  issues: VerdictIssue[];
  /** Base-test failures the Coach acknowledged as asked for by a criterion. */
  acknowledged_changes?: { test: string; criterion: string; reason: string }[];
  /** Base tests that already failed at the base and still fail. */
  preexisting_failures?: string[];
  /** Present exactly when status is "blocked". */
  blocked?: { reason: string; recommendation: string };
}

/** How many must-fix descriptions one history line quotes before summarising the rest. */
const DESCRIPTIONS_PER_ENTRY = 3;
const DESCRIPTION_CHARS = 120;

/**
 * `review.md` for people and scripts. Only the verdict line starts with `Verdict:` — free text is quoted or
 * indented — so `grep '^Verdict: APPROVED$'` cannot be fooled by a rationale. Same input, same text.
 */
export function renderReview(input: ReviewInput): string {
  if ((input.status === 'blocked') !== (input.blocked !== undefined)) {
    throw new Error(
      `renderReview: "blocked" must be given exactly when status is "blocked" (status: ${input.status}).`,
    );
  }
  const verdict = input.status === 'approved' ? 'APPROVED' : 'NOT_APPROVED';
  const sections = [
    `# Review: ${input.task_id} — ${oneLine(input.title)}`,
    `Verdict: ${verdict}`,
    `Status: ${input.status} · Strikes: ${input.strikes}/${input.max_strikes} · Turn: ${input.turn}`,
    `Coach's rationale:\n\n${quote(input.rationale || '(none given)')}`,
    `## Validation history\n\n${historyTable(input.history)}`,
    `## Requirements compliance\n\n${requirementsTable(input.requirements)}`,
    `## Must fix\n\n${issueList(input.issues, 'must_fix')}`,
    `## Should fix\n\n${issueList(input.issues, 'should_fix')}`,
    `## Beyond spec (info only)\n\n${infoList(input.issues)}`,
  ];
  const changes = input.acknowledged_changes ?? [];
  if (changes.length > 0) {
    const items = changes.map(
      (change) => `- ${inlineCode(change.test)} (${change.criterion}): ${oneLine(change.reason)}`,
    );
    sections.push(`## Changed base behaviour\n\n${items.join('\n')}`);
  }
  const preexisting = input.preexisting_failures ?? [];
  if (preexisting.length > 0) {
    sections.push(
      `## Pre-existing failures (failed at the base, not held against this task)\n\n${preexisting.map((id) => `- ${inlineCode(id)}`).join('\n')}`,
    );
  }
  if (input.blocked) sections.push(blockedSection(input.history, input.blocked));
  return `${sections.join('\n\n')}\n`;
}

function historyTable(history: VerdictLogEntry[]): string {
  if (history.length === 0) return 'No verdicts recorded yet.';
  const rows = history.map((entry) =>
    row([
      `${entry.seq} (turn ${entry.turn})`,
      entry.recorded_at,
      entryResult(entry),
      entrySummary(entry),
    ]),
  );
  return [
    row(['Attempt', 'Date', 'Result', 'Issues']),
    row(['---', '---', '---', '---']),
    ...rows,
  ].join('\n');
}

function requirementsTable(requirements: RequirementCheck[]): string {
  if (requirements.length === 0) return 'No acceptance criteria were checked.';
  const rows = requirements.map((requirement) => {
    const evidence = requirement.evidence.map((item) => {
      const label = inlineCode(evidenceLabel(item));
      return item.valid ? label : `${label} (invalid${item.problem ? `: ${item.problem}` : ''})`;
    });
    return row([
      `${requirement.id}: ${requirement.text}`,
      evidence.join(', ') || '—',
      requirement.status,
    ]);
  });
  return [row(['Criterion', 'Evidence', 'Status']), row(['---', '---', '---']), ...rows].join('\n');
}

function row(cells: string[]): string {
  return `| ${cells.map(tableCell).join(' | ')} |`;
}

function issueList(issues: VerdictIssue[], severity: VerdictIssue['severity']): string {
  const selected = issues.filter((issue) => issue.severity === severity);
  return selected.length === 0
    ? 'None.'
    : selected.map((issue, index) => issueItem(issue, index + 1)).join('\n');
}

function infoList(issues: VerdictIssue[]): string {
  const info = issues.filter((issue) => issue.severity === 'info');
  if (info.length === 0) return 'None.';
  return info
    .map(
      (issue) =>
        `- **${issue.category}**: ${oneLine(issue.description)}${issue.location ? ` (${inlineCode(issue.location)})` : ''}`,
    )
    .join('\n');
}

function blockedSection(
  history: VerdictLogEntry[],
  blocked: NonNullable<ReviewInput['blocked']>,
): string {
  const pattern = history.map(
    (entry) => `- Turn ${entry.turn}: ${entryResult(entry)} — ${entrySummary(entry)}`,
  );
  const stall = history.at(-1)?.stall_reason;
  return [
    '## TASK BLOCKED',
    `Failure pattern:\n\n${pattern.join('\n') || '- (no attempts recorded)'}`,
    `**Why blocked:** ${oneLine(blocked.reason)}`,
    ...(stall ? [`**Stall detected:** ${oneLine(stall)}`] : []),
    `**Recommendation:** ${oneLine(blocked.recommendation)}`,
  ].join('\n\n');
}

function entryResult(entry: VerdictLogEntry): string {
  if (entry.kind === 'refused_approval') return 'approval refused';
  if (entry.decision === 'approve') return 'approved';
  return entry.status === 'blocked' ? 'feedback, blocked' : 'feedback';
}

/** One line: refusal or block reasons, must-fix descriptions, the should-fix count. */
function entrySummary(entry: VerdictLogEntry): string {
  const parts: string[] = [];
  if (entry.reasons?.length) parts.push(entry.reasons.join('; '));
  const mustFix = entry.issues.filter((issue) => issue.severity === 'must_fix');
  if (mustFix.length > 0) {
    const quoted = mustFix
      .slice(0, DESCRIPTIONS_PER_ENTRY)
      .map((issue) => shorten(oneLine(issue.description), DESCRIPTION_CHARS));
    const more =
      mustFix.length > DESCRIPTIONS_PER_ENTRY
        ? `; … (+${mustFix.length - DESCRIPTIONS_PER_ENTRY} more)`
        : '';
    parts.push(`${mustFix.length} must_fix: ${quoted.join('; ')}${more}`);
  }
  const shouldFix = entry.issues.filter((issue) => issue.severity === 'should_fix').length;
  if (shouldFix > 0) parts.push(`${shouldFix} should_fix`);
  return oneLine(parts.join(' · ')) || 'no issues';
}

/** Line breaks become spaces; runs of spaces inside a line stay (`greet('  Ada  ')` means them). */
function oneLine(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ').trim();
}
