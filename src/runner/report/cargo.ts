import { clipMessage, stripAnsi } from './text.js';
import type { TestCaseResult, TestStatus } from './types.js';

// `test tests::it_adds ... ok`, `... FAILED`, `... ignored` or `... ignored, needs db`.
const RESULT_LINE = /^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, (.*))?$/;
// The captured output of a failed test: `---- tests::it_fails stdout ----`.
const FAILURE_HEADER = /^---- (.+?) stdout ----$/;
// Ends a captured-output section: the next header, or the `failures:` list of names.
const FAILURE_SECTION_END = /^(?:---- .+ stdout ----|failures:)$/;

const STATUS: Record<string, TestStatus> = { ok: 'passed', FAILED: 'failed', ignored: 'skipped' };

/** Per-test results from `cargo test` output (libtest's human format), ids `path::name`. */
export function parseCargoTestOutput(text: string): TestCaseResult[] {
  const lines = stripAnsi(text)
    .split('\n')
    .map((line) => line.trimEnd());
  const failureOutput = capturedFailureOutput(lines);
  const results: TestCaseResult[] = [];
  for (const line of lines) {
    const match = RESULT_LINE.exec(line);
    if (!match) continue;
    const [, id = '', outcome = '', reason] = match;
    const status = STATUS[outcome] ?? 'failed';
    const message = status === 'failed' ? failureOutput.get(id) : reason;
    results.push(message ? { id, status, message: clipMessage(message) } : { id, status });
  }
  return results;
}

function capturedFailureOutput(lines: string[]): Map<string, string> {
  const outputs = new Map<string, string>();
  for (let index = 0; index < lines.length; index += 1) {
    const id = FAILURE_HEADER.exec(lines[index] ?? '')?.[1];
    if (id === undefined) continue;
    const body: string[] = [];
    for (
      index += 1;
      index < lines.length && !FAILURE_SECTION_END.test(lines[index] ?? '');
      index += 1
    ) {
      body.push(lines[index] ?? '');
    }
    index -= 1;
    outputs.set(id, body.join('\n').trim());
  }
  return outputs;
}
