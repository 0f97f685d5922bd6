/** One item of a validator's `**Findings:**` list. */
export interface ValidatorFinding {
  /** Lowercase: error, fail, warn, info, or another level word the validator used (critical, note, ...). */
  level: string;
  text: string;
  /** `path:line` or `path` when the finding names one. */
  location?: string;
}

export interface ValidatorVerdict {
  verdict: 'PASS' | 'WARN' | 'FAIL' | null;
  findings: ValidatorFinding[];
  /** Only a FAIL verdict asks for another attempt. */
  retry: boolean;
  /** Feedback for the next attempt; present only when retry is true. */
  retry_prompt?: string;
}

type Verdict = NonNullable<ValidatorVerdict['verdict']>;

/** A finding as written, before its level and location are read. */
interface FindingDraft {
  lines: string[];
  /** Column where the bullet's text starts; continuation lines are dedented to it. */
  content_column: number;
}

const RETRY_PROMPT_HEADING = '## PREVIOUS VALIDATION FAILED';

// Applied to a line with emphasis, heading and quote markup removed. A template line such as
// `Verdict: PASS|WARN|FAIL` is not a verdict.
const VERDICT_LINE =
  /^(?:final\s+|overall\s+)?verdict\s*:\s*[^\w\s|]*\s*(pass(?:ed)?|warn(?:ings?)?|fail(?:ed|ure)?)\b(?!\s*[|/])/i;
const FINDINGS_HEADING = /^(?:findings|issues)(?:\s*\(\d+\))?\s*(?::.*)?$/i;
const BULLET = /^(\s*)(?:[-*+•]|\d+[.)])\s+(.*)$/;
const FENCE = /^\s*(`{3,}|~{3,})/;
const SECTION_BREAK = /^(?:\s{0,3}#{1,6}\s|\*\*[^*]+\*\*\s*:?\s*$|\*\*[^*]+:\*\*)/;

const LEVEL_WORD = String.raw`(error|err|fail(?:ed|ure)?|critical|blocker|major|minor|warn(?:ing)?|info|note|suggestion|nit|pass(?:ed)?|ok)`;
/** `[ERROR]`, `**FAIL**`, `**FAIL:**`, `WARN:` or `WARN -` at the start of a finding, with its separator. */
const LEVEL_PREFIX = new RegExp(
  String.raw`^(?:\[${LEVEL_WORD}\]|\*\*${LEVEL_WORD}\*\*|\*\*${LEVEL_WORD}\s*:\s*\*\*|${LEVEL_WORD}(?=\s*:|\s+[-—–]\s))\s*(?:[:—–-]\s*)?`,
  'i',
);
const LEVEL_ALIASES: Readonly<Record<string, string>> = {
  err: 'error',
  failed: 'fail',
  failure: 'fail',
  warning: 'warn',
  passed: 'pass',
};

const PATH = String.raw`[\w.@~/\\-]+`;
const LINE_SUFFIX = String.raw`(?::\d+(?::\d+)?)?`;
/** `src/app.ts:12 — message`, `` `src/app.ts` - message ``, `src/app.ts:12: message`. */
const LEADING_LOCATION = new RegExp(
  String.raw`^\x60?(${PATH}?${LINE_SUFFIX})\x60?(?:\s+[-—–]\s+|\s*[—–]\s*|:\s+)(.+)$`,
);
/** `message (file.py:3)` */
const TRAILING_LOCATION = new RegExp(
  String.raw`^(.+?)\s*\(\x60?(${PATH}${LINE_SUFFIX})\x60?\)\s*\.?$`,
);
/** A `path:line` anywhere in the text; the text keeps it. */
const INLINE_LOCATION = new RegExp(
  String.raw`(?<![\w.@~/\\-])(${PATH}\.[A-Za-z]\w{0,7}:\d+(?::\d+)?)`,
);
const NO_FINDINGS = /^(?:none|n\/?a|nothing|no (?:findings|issues)(?: found)?)\.?$/i;

/**
 * Reads a validator agent's report: the last `Verdict:` line decides, the `Findings:` lists give the
 * findings. Fenced code blocks are quoted material, never a verdict or a bullet.
 */
export function parseValidatorVerdict(text: string): ValidatorVerdict {
  const { verdict, drafts } = scanReport(text);
  const defaultLevel = verdict === 'FAIL' ? 'fail' : verdict === 'WARN' ? 'warn' : 'info';
  const findings = drafts
    .map((draft) => readFinding(draft, defaultLevel))
    .filter((finding) => !NO_FINDINGS.test(finding.text));
  if (verdict !== 'FAIL') return { verdict, findings, retry: false };
  return { verdict, findings, retry: true, retry_prompt: retryPrompt(findings) };
}

function scanReport(text: string): { verdict: Verdict | null; drafts: FindingDraft[] } {
  let verdict: Verdict | null = null;
  const drafts: FindingDraft[] = [];
  let inFindings = false;
  let listIndent: number | null = null;
  let current: FindingDraft | null = null;
  let openFence: string | null = null;
  let afterBlank = false;

  for (const line of text.split(/\r?\n/)) {
    const fence = FENCE.exec(line)?.[1];
    if (openFence !== null || fence !== undefined) {
      // A code block under a finding belongs to it.
      if (current) current.lines.push(dedent(line, current.content_column));
      if (openFence === null) openFence = fence!;
      else if (fence !== undefined && fence[0] === openFence[0] && fence.length >= openFence.length)
        openFence = null;
      continue;
    }
    const plain = line
      .replace(/[*_`]/g, '')
      .replace(/^[\s>#]+/, '')
      .trim();
    const verdictMatch = VERDICT_LINE.exec(plain);
    if (verdictMatch) {
      verdict = toVerdict(verdictMatch[1]!);
      inFindings = false;
      current = null;
      continue;
    }
    if (FINDINGS_HEADING.test(plain)) {
      inFindings = true;
      listIndent = null;
      current = null;
      afterBlank = false;
      continue;
    }
    if (!inFindings) continue;
    if (line.trim() === '') {
      afterBlank = true;
      continue;
    }
    const indent = line.length - line.trimStart().length;
    const bullet = BULLET.exec(line);
    if (bullet && (listIndent === null || indent <= listIndent + 1)) {
      listIndent ??= indent;
      current = { lines: [bullet[2]!.trim()], content_column: line.length - bullet[2]!.length };
      drafts.push(current);
      afterBlank = false;
      continue;
    }
    const nested = listIndent !== null && indent > listIndent;
    if (!nested && SECTION_BREAK.test(line)) {
      inFindings = false;
      current = null;
      continue;
    }
    if (current && (nested || !afterBlank)) {
      current.lines.push(dedent(line, current.content_column));
      afterBlank = false;
      continue;
    }
    // Text before the first bullet introduces the list; a paragraph after the list ends it.
    if (listIndent !== null) {
      inFindings = false;
      current = null;
    }
  }
  return { verdict, drafts };
}

function toVerdict(word: string): Verdict {
  const lower = word.toLowerCase();
  return lower.startsWith('pass') ? 'PASS' : lower.startsWith('warn') ? 'WARN' : 'FAIL';
}

function dedent(line: string, column: number): string {
  const indent = line.length - line.trimStart().length;
  return line.slice(Math.min(indent, column)).trimEnd();
}

function readFinding(draft: FindingDraft, defaultLevel: string): ValidatorFinding {
  let first = draft.lines[0]!;
  let level = defaultLevel;
  const levelMatch = LEVEL_PREFIX.exec(first);
  if (levelMatch) {
    const word = levelMatch
      .slice(1)
      .find((group) => group !== undefined)!
      .toLowerCase();
    level = LEVEL_ALIASES[word] ?? word;
    first = first.slice(levelMatch[0].length);
  }
  let location: string | undefined;
  const leading = LEADING_LOCATION.exec(first);
  const trailing = TRAILING_LOCATION.exec(first);
  if (leading && looksLikePath(leading[1]!)) {
    location = leading[1]!;
    first = leading[2]!;
  } else if (trailing && looksLikePath(trailing[2]!)) {
    location = trailing[2]!;
    first = trailing[1]!;
  }
  const text = [first.trim(), ...draft.lines.slice(1)].join('\n').trim();
  location ??= INLINE_LOCATION.exec(text)?.[1];
  return location === undefined ? { level, text } : { level, text, location };
}

/** A file path names a directory or has an extension; plain words and numbers are not locations. */
function looksLikePath(candidate: string): boolean {
  const path = candidate.replace(/:\d+(?::\d+)?$/, '');
  return /[A-Za-z]/.test(path) && (/[/\\]/.test(path) || /\.[A-Za-z]\w{0,7}$/.test(path));
}

function retryPrompt(findings: ValidatorFinding[]): string {
  const items =
    findings.length === 0
      ? [
          '- The validator reported FAIL without itemised findings; re-check the work against the task.',
        ]
      : findings.map(formatFinding);
  return [
    RETRY_PROMPT_HEADING,
    '',
    'The validator rejected the previous submission. Findings:',
    ...items,
    '',
    'Fix every finding above before re-submitting. Do not re-submit unchanged work, and do not weaken, skip ' +
      'or delete tests or checks to make them pass.',
  ].join('\n');
}

function formatFinding(finding: ValidatorFinding): string {
  const [first, ...rest] = finding.text.split('\n');
  const where = finding.location ? `${finding.location} — ` : '';
  return [
    `- [${finding.level}] ${where}${first}`,
    ...rest.map((line) => (line ? `  ${line}` : line)),
  ].join('\n');
}
