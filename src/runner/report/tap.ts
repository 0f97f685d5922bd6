import { Parser, type Result } from 'tap-parser';
import { clipMessage, stripAnsi } from './text.js';
import type { TestCaseResult } from './types.js';

/** One test point and the points of the subtest it closes (TAP 14 indented subtests). */
interface Point {
  result: Result;
  /** The comment (`# name`) printed just before the point: tape groups its assertions under it. */
  group?: string;
  children: Point[];
}

type EventLog = ReturnType<typeof Parser.parse>;

const TAP_VERSION = /^TAP version 1[34]\s*$/m;
const PLAN = /^1\.\.\d+(?:\s*#.*)?$/m;
const POINT = /^(?:not )?ok\b/m;

/**
 * Watches a run's output line by line for what `parseTapOutput` needs to find a TAP document, so the
 * log is read and parsed only when one can be there (reading a 60 MB log of other output whole cost
 * the server 120 MB).
 */
export class TapSighting {
  private version = false;
  private plan = false;
  private point = false;

  see(line: string): void {
    const first = line.charCodeAt(0);
    // T, 1, o, n: the only first characters the three patterns can match.
    if (first !== 84 && first !== 49 && first !== 111 && first !== 110) return;
    this.version ||= TAP_VERSION.test(line);
    this.plan ||= PLAN.test(line);
    this.point ||= POINT.test(line);
  }

  get found(): boolean {
    return this.version || (this.plan && this.point);
  }
}

// Comments a runner prints about the run, not a test group: tape's and node's counters, node-tap's
// `# Subtest:` headers and timings.
const NOT_A_GROUP =
  /^# (?:Subtest:|tests \d|pass \d|fail \d|ok$|suites |cancelled |skipped |todo |duration_ms |time=|\{ total|No coverage)/;

/**
 * Per-test results from TAP 13/14 printed in a run's output (tape, node-tap, ava --tap, mocha's tap
 * reporter, `node --test --test-reporter tap`), read with tap-parser, the TAP project's own parser.
 * Undefined when the output holds no TAP document (a version line, or a plan with test points).
 *
 * The results are the deepest points, as the runners count them: node's `describe > it` is the `it`,
 * node-tap's and tape's are their assertions (`file > test > assertion`; tape's test is the `# name`
 * comment above them). Ids join the names of the enclosing subtests with ` > `.
 */
export function parseTapOutput(output: string): TestCaseResult[] | undefined {
  const text = stripAnsi(output).replace(/\r\n?/g, '\n');
  if (!TAP_VERSION.test(text) && !(PLAN.test(text) && POINT.test(text))) return undefined;
  // Chained commands can print several documents; each starts with its version line.
  const documents = text.split(/^(?=TAP version 1[34]\s*$)/m);
  const tests = documents.flatMap((document) => testsOf(points(Parser.parse(document))));
  return tests.length > 0 ? uniqueIds(tests) : undefined;
}

function points(log: EventLog): Point[] {
  const found: Point[] = [];
  let children: Point[] = [];
  let group: string | undefined;
  for (const [event, payload] of log as [string, unknown][]) {
    if (event === 'child') children = points(payload as EventLog);
    else if (event === 'comment') {
      const comment = String(payload).trim();
      if (!NOT_A_GROUP.test(comment)) group = comment.replace(/^#\s*/, '');
    } else if (event === 'assert') {
      found.push({ result: payload as Result, group, children });
      children = [];
    }
  }
  return found;
}

function testsOf(found: Point[]): TestCaseResult[] {
  const tests: TestCaseResult[] = [];
  const visit = (point: Point, path: string[]): void => {
    const id = [...path, point.result.name];
    if (point.children.length > 0) point.children.forEach((child) => visit(child, id));
    else tests.push(toResult(point, point.group && path.length === 0 ? [point.group, ...id] : id));
  };
  found.forEach((point) => visit(point, []));
  return tests;
}

function toResult(point: Point, path: string[]): TestCaseResult {
  const { result } = point;
  const name = path.filter((part) => part !== '').join(' > ');
  if (result.skip || result.todo) {
    const reason = typeof result.skip === 'string' ? result.skip : result.todo;
    return {
      id: name,
      status: 'skipped',
      ...(typeof reason === 'string' && reason ? { message: clipMessage(reason) } : {}),
    };
  }
  if (result.ok) return { id: name, status: 'passed' };
  const message = failureMessage(result);
  return { id: name, status: 'failed', ...(message ? { message } : {}) };
}

/** What the diagnostics say went wrong: node's `error`, ava's `message`, tape's expected/actual. */
function failureMessage(result: Result): string | undefined {
  const diag = (result.diag ?? {}) as Record<string, unknown>;
  const text = (value: unknown): string =>
    typeof value === 'string' ? value : JSON.stringify(value);
  const parts: string[] = [];
  for (const key of ['error', 'message', 'name']) {
    if (typeof diag[key] === 'string' && diag[key] !== '') {
      parts.push(diag[key]);
      break;
    }
  }
  if ('expected' in diag || 'actual' in diag)
    parts.push(`expected: ${text(diag.expected)}, actual: ${text(diag.actual)}`);
  if (typeof diag.diff === 'string') parts.push(diag.diff);
  // ava puts its diff under `details`.
  if (diag.details && typeof diag.details === 'object')
    parts.push(...Object.values(diag.details as Record<string, unknown>).map(text));
  if (result.name) parts.unshift(result.name);
  if (parts.length === 0) return undefined;
  return clipMessage(parts.join('\n'));
}

/** tape repeats assertion names (`should be equal`) within a test: the second is `name (2)`. */
function uniqueIds(tests: TestCaseResult[]): TestCaseResult[] {
  const seen = new Map<string, number>();
  return tests.map((test) => {
    const count = (seen.get(test.id) ?? 0) + 1;
    seen.set(test.id, count);
    return count === 1 ? test : { ...test, id: `${test.id} (${count})` };
  });
}
