import path from 'node:path';

/** One error a linter or type checker reported, keyed without its line so moved code is not "new". */
export interface LintFinding {
  rule: string;
  file: string;
  line: number | null;
  message: string;
}

export type LintFormat =
  | 'eslint-json'
  | 'ruff-json'
  | 'cargo-json'
  | 'golangci-json'
  | 'tsc'
  | 'mypy'
  | 'flake8'
  | 'golangci-text';

export interface ParsedLint {
  format: LintFormat;
  findings: LintFinding[];
}

/**
 * Error-level findings from the output of ESLint (`-f json`), Ruff (`--output-format json` or text),
 * flake8, tsc, mypy, `cargo clippy --message-format json` or golangci-lint (JSON or text).
 * Undefined when the output is in none of these formats: the caller then falls back to the exit code.
 */
export function parseLintOutput(output: string, root: string): ParsedLint | undefined {
  const relative = (file: string) =>
    (path.isAbsolute(file) ? path.relative(root, file) : path.normalize(file))
      .split(path.sep)
      .join('/');
  const json = parseJsonDocument(output);
  if (
    Array.isArray(json) &&
    json.every((item) => typeof item === 'object' && item && 'filePath' in item)
  ) {
    return {
      format: 'eslint-json',
      findings: json.flatMap((file: EslintFile) => eslintFindings(file, relative)),
    };
  }
  if (
    Array.isArray(json) &&
    json.every((item) => typeof item === 'object' && item && 'filename' in item && 'code' in item)
  ) {
    return {
      format: 'ruff-json',
      findings: json.map((item: RuffItem) =>
        finding(
          item.code ?? 'syntax',
          relative(item.filename),
          item.location?.row ?? null,
          item.message,
        ),
      ),
    };
  }
  if (json && typeof json === 'object' && 'Issues' in json) {
    const issues = ((json as { Issues: GolangciIssue[] | null }).Issues ?? []).filter(
      (issue) => (issue.Severity ?? 'error') === 'error' || issue.Severity === '',
    );
    return {
      format: 'golangci-json',
      findings: issues.map((issue) =>
        finding(issue.FromLinter, relative(issue.Pos.Filename), issue.Pos.Line, issue.Text),
      ),
    };
  }
  const cargo = cargoFindings(output, relative);
  if (cargo) return { format: 'cargo-json', findings: cargo };
  return textFindings(output, relative);
}

/** Findings present now and absent at the base, compared by rule + file + normalised message (not line). */
export function newFindings(current: LintFinding[], base: LintFinding[]): LintFinding[] {
  const remaining = new Map<string, number>();
  for (const item of base)
    remaining.set(findingKey(item), (remaining.get(findingKey(item)) ?? 0) + 1);
  return current.filter((item) => {
    const key = findingKey(item);
    const left = remaining.get(key) ?? 0;
    if (left === 0) return true;
    remaining.set(key, left - 1);
    return false;
  });
}

export function findingKey(item: LintFinding): string {
  return `${item.rule}\u0000${item.file}\u0000${normaliseMessage(item.message)}`;
}

export function describeFinding(item: LintFinding): string {
  return `${item.file}${item.line ? `:${item.line}` : ''} ${item.rule}: ${item.message}`;
}

/** Numbers and quoted names change with unrelated edits (line references, generated names); ignore them. */
function normaliseMessage(message: string): string {
  return message.toLowerCase().replace(/\d+/g, 'N').replace(/\s+/g, ' ').trim();
}

function finding(rule: string, file: string, line: number | null, message: string): LintFinding {
  return { rule, file, line, message: message.split('\n')[0]!.trim() };
}

interface EslintFile {
  filePath: string;
  messages: { ruleId: string | null; severity: number; message: string; line?: number }[];
}
interface RuffItem {
  code: string | null;
  filename: string;
  message: string;
  location?: { row: number };
}
interface GolangciIssue {
  FromLinter: string;
  Text: string;
  Severity?: string;
  Pos: { Filename: string; Line: number };
}

function eslintFindings(file: EslintFile, relative: (file: string) => string): LintFinding[] {
  return file.messages
    .filter((message) => message.severity === 2)
    .map((message) =>
      finding(
        message.ruleId ?? 'parse-error',
        relative(file.filePath),
        message.line ?? null,
        message.message,
      ),
    );
}

/** A whole-output JSON document, tolerating log lines before it (npm prints a banner). */
function parseJsonDocument(output: string): unknown {
  const start = output.search(/^[[{]/m);
  if (start < 0) return undefined;
  try {
    return JSON.parse(output.slice(start));
  } catch {
    return undefined;
  }
}

/** `cargo clippy --message-format json`: one JSON object per line; compiler messages of level error. */
function cargoFindings(
  output: string,
  relative: (file: string) => string,
): LintFinding[] | undefined {
  let sawCargo = false;
  const findings: LintFinding[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('{"reason":')) continue;
    sawCargo = true;
    let parsed: {
      reason?: string;
      message?: {
        level: string;
        message: string;
        code?: { code: string } | null;
        spans?: { file_name: string; line_start: number; is_primary: boolean }[];
      };
    };
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    const message = parsed.message;
    if (parsed.reason !== 'compiler-message' || !message || message.level !== 'error') continue;
    const span = message.spans?.find((item) => item.is_primary) ?? message.spans?.[0];
    if (!span) continue; // "aborting due to N previous errors" has no span and repeats the others.
    findings.push(
      finding(
        message.code?.code ?? 'error',
        relative(span.file_name),
        span.line_start,
        message.message,
      ),
    );
  }
  return sawCargo ? findings : undefined;
}

const TSC = /^(.+?)\((\d+),\d+\): error (TS\d+): (.+)$/;
const MYPY = /^(.+?):(\d+):(?:\d+:)? error: (.+?)(?:\s+\[([\w-]+)\])?$/;
const FLAKE8 = /^(.+?):(\d+):\d+: ([A-Z]+\d+) (.+)$/;
const GOLANGCI = /^(.+?\.go):(\d+)(?::\d+)?: (.+) \((\w+)\)$/;

/** Line formats, one finding per matching line; the first format that matches anything wins. */
function textFindings(output: string, relative: (file: string) => string): ParsedLint | undefined {
  const lines = output.split('\n').map((line) => line.trimEnd());
  const formats: [LintFormat, (line: string) => LintFinding | undefined][] = [
    [
      'tsc',
      (line) => match(TSC, line, (m) => finding(m[3]!, relative(m[1]!), Number(m[2]), m[4]!)),
    ],
    [
      'mypy',
      (line) =>
        match(MYPY, line, (m) => finding(m[4] ?? 'error', relative(m[1]!), Number(m[2]), m[3]!)),
    ],
    [
      'golangci-text',
      (line) => match(GOLANGCI, line, (m) => finding(m[4]!, relative(m[1]!), Number(m[2]), m[3]!)),
    ],
    [
      'flake8',
      (line) => match(FLAKE8, line, (m) => finding(m[3]!, relative(m[1]!), Number(m[2]), m[4]!)),
    ],
  ];
  for (const [format, parse] of formats) {
    const findings = lines.map(parse).filter((item): item is LintFinding => item !== undefined);
    if (findings.length > 0) return { format, findings };
  }
  return undefined;
}

function match<T>(pattern: RegExp, line: string, build: (m: RegExpExecArray) => T): T | undefined {
  const m = pattern.exec(line);
  return m ? build(m) : undefined;
}
