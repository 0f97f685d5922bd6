import type { VerdictIssue } from './verdict-entry.js';

/** One acceptance criterion as the requirements check left it. */
export interface RequirementCheck {
  id: string;
  text: string;
  status: 'verified' | 'claimed_unverified' | 'missing';
  evidence: RequirementEvidence[];
}

export interface RequirementEvidence {
  file?: string;
  line?: number;
  test?: string;
  valid: boolean;
  /** Why the evidence does not hold, when it does not. */
  problem?: string;
}

/** `src/app.ts:12`, a test id, or both. */
export function evidenceLabel(evidence: RequirementEvidence): string {
  const place =
    evidence.file === undefined
      ? undefined
      : evidence.line === undefined
        ? evidence.file
        : `${evidence.file}:${evidence.line}`;
  return (
    [place, evidence.test].filter((part) => part !== undefined).join(' ') ||
    '(no file or test named)'
  );
}

/** A code span that survives backticks in the text. */
export function inlineCode(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longestRun + 1);
  const padding = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${padding}${text}${padding}${fence}`;
}

/** A fenced block whose fence is longer than any backtick run inside. */
export function codeBlock(text: string): string {
  const longestRun = Math.max(0, ...(text.match(/`{3,}/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}text\n${text}\n${fence}`;
}

/** One table cell: a line break or an unescaped pipe would end the cell or the row. */
export function tableCell(text: string): string {
  return text.replace(/\s*\r?\n\s*/g, ' ').replace(/\|/g, '\\|');
}

export function shorten(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars - 1).trimEnd()}…`;
}

/** Free text as a block quote, so a `## ` or `Verdict:` line inside it is never read as the document's own. */
export function quote(text: string): string {
  return text
    .trim()
    .split(/\r?\n/)
    .map((line) => (line.trim() === '' ? '>' : `> ${line}`))
    .join('\n');
}

/** A numbered issue with its location and suggestion; continuation lines stay inside the list item. */
export function issueItem(issue: VerdictIssue, number: number, maxChars = Infinity): string {
  const marker = `${number}. `;
  const lines = [`${marker}**${issue.category}**: ${shorten(issue.description.trim(), maxChars)}`];
  if (issue.location) lines.push(`- Location: ${inlineCode(issue.location)}`);
  if (issue.suggestion) lines.push(`- Suggestion: ${shorten(issue.suggestion.trim(), maxChars)}`);
  return indentContinuation(lines.join('\n'), marker.length);
}

function indentContinuation(text: string, columns: number): string {
  const indent = ' '.repeat(columns);
  return text
    .split(/\r?\n/)
    .map((line, index) => (index === 0 || line === '' ? line : `${indent}${line}`))
    .join('\n');
}
