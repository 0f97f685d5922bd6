/** One check of `coachgate gate` beyond the verdict and the test run (graph health, build, typecheck, lint). */
export interface GateCheck {
  name: 'graph' | 'build' | 'typecheck' | 'lint';
  passed: boolean;
  reason: string;
  /** Lines worth showing under the row: new lint errors, edges that would break a cycle. */
  details: string[];
}

export interface GateRow {
  label: string;
  state: 'pass' | 'fail' | 'skip';
  detail: string;
  details: string[];
}

/** Everything `coachgate gate` prints, in every format; `--format json` prints exactly this. */
export interface GateReport {
  task_id: string;
  title: string;
  passed: boolean;
  /** From the verified verdicts; merged_approved once the approval was checked through merged.json. */
  status: 'approved' | 'merged_approved' | 'in_progress' | 'blocked';
  strikes: number;
  max_strikes: number;
  rows: GateRow[];
  reasons: string[];
  /** Which records were checked and with which keys (signed records). */
  verified_with: string;
  /** Base-test changes the approving verdict acknowledged (signed with it). */
  acknowledged_changes: { test: string; criterion: string; reason: string }[];
  /** Base tests that fail at the base and still fail: listed, never held against the task. */
  preexisting_failures: string[];
  /** Present when the task is blocked: the 3-strike escalation. */
  blocked?: { reason: string; failure_pattern: string[]; recommendation: string };
}

export type GateFormat = 'box' | 'text' | 'json';
export const GATE_FORMATS: GateFormat[] = ['box', 'text', 'json'];

const MARK = { pass: '✓', fail: '✗', skip: '–' } as const;
const WIDTH = 72;

export function renderGate(report: GateReport, format: GateFormat): string {
  if (format === 'json') return JSON.stringify(report, null, 2);
  return format === 'text' ? renderText(report) : renderBox(report);
}

/** Plain lines for logs and hooks: the verdict line first, then the reasons, then each row. */
function renderText(report: GateReport): string {
  const head = report.passed
    ? `coachgate gate: ${report.task_id} PASS (approved, tests passed on the current tree)`
    : `coachgate gate: ${report.task_id} FAIL`;
  const rows = report.rows.map((row) => `${row.label.toLowerCase()}: ${row.state} — ${row.detail}`);
  const blocked = report.blocked
    ? [
        'failure pattern:',
        ...report.blocked.failure_pattern.map((line) => `  ${line}`),
        `recommendation: ${report.blocked.recommendation}`,
      ]
    : [];
  const verified = `verified: ${report.verified_with}`;
  return [
    head,
    ...report.reasons.map((reason) => `  - ${reason}`),
    ...rows,
    ...report.acknowledged_changes.map(
      (change) => `changed base behaviour: ${change.test} — ${change.criterion}: ${change.reason}`,
    ),
    ...report.preexisting_failures.map((test) => `pre-existing failure: ${test}`),
    ...blocked,
    verified,
  ].join('\n');
}

/** The coach-gate skill's box: a titled frame, one row per check, and the strike box when blocked. */
function renderBox(report: GateReport): string {
  const verdict = report.passed ? 'PASSED' : report.blocked ? 'BLOCKED' : 'FAILED';
  const lines = [`COACH GATE: ${verdict} — ${report.task_id} ${report.title}`.trim()];
  const body: string[] = [];
  for (const row of report.rows) {
    body.push(...wrap(`${MARK[row.state]} ${row.label.padEnd(13)} ${row.detail}`, 16));
    for (const detail of row.details.slice(0, 5)) body.push(...wrap(`    ${detail}`, 6));
  }
  const sections = [lines, body];
  // The rows summarise; the reasons say what to do (e.g. which key to pin), so a failing box shows them.
  if (!report.passed && !report.blocked && report.reasons.length > 0)
    sections.push([
      'Why it fails:',
      ...report.reasons.slice(0, 8).flatMap((reason) => wrap(`  - ${reason}`, 4)),
    ]);
  if (report.acknowledged_changes.length > 0) {
    sections.push([
      'Changed base behaviour (acknowledged by the Coach):',
      ...report.acknowledged_changes.flatMap((change) =>
        wrap(`  ${change.test} — ${change.criterion}: ${change.reason}`, 6),
      ),
    ]);
  }
  if (report.preexisting_failures.length > 0) {
    sections.push([
      'Pre-existing failures (fail at the base too, not held against the task):',
      ...report.preexisting_failures.flatMap((test) => wrap(`  ${test}`, 4)),
    ]);
  }
  if (report.blocked) {
    sections.push([
      `STRIKES: ${report.strikes}/${report.max_strikes} — escalate to a human`,
      'Failure pattern:',
      ...report.blocked.failure_pattern.flatMap((line) => wrap(`  ${line}`, 4)),
      ...wrap(`Why blocked: ${report.blocked.reason}`, 2),
      ...wrap(`Recommendation: ${report.blocked.recommendation}`, 2),
    ]);
  }
  sections.push(wrap(`Verified: ${report.verified_with}`, 2));
  const bar = '═'.repeat(WIDTH + 2);
  const framed = sections.map((section) =>
    section.map((line) => `║ ${line.padEnd(WIDTH)} ║`).join('\n'),
  );
  return [`╔${bar}╗`, framed.join(`\n╠${bar}╣\n`), `╚${bar}╝`].join('\n');
}

/** Splits a line at spaces to fit the box, indenting continuations so rows stay readable. */
function wrap(line: string, indent: number): string[] {
  const out: string[] = [];
  let rest = line;
  while (rest.length > WIDTH) {
    const cut = rest.lastIndexOf(' ', WIDTH);
    const at = cut > indent ? cut : WIDTH;
    out.push(rest.slice(0, at));
    rest = ' '.repeat(indent) + rest.slice(at).trimStart();
  }
  out.push(rest);
  return out;
}
