import { describe, expect, it } from 'vitest';
import { parsePytestReportLines } from '../../src/runner/report/pytest-jsonl.js';

// Real runs of the plugin are compared with pytest's own JUnit report in report-pytest-plugin.test.ts;
// these are the report shapes a finished run does not leave.
const line = (record: object) => `${JSON.stringify(record)}\n`;
const START = line({ event: 'start', pytest: '9.0.3' });
const CALL_PASSED = line({ event: 'test', nodeid: 't.py::a', when: 'call', outcome: 'passed' });
const TEARDOWN_PASSED = line({
  event: 'test',
  nodeid: 't.py::a',
  when: 'teardown',
  outcome: 'passed',
});

describe('parsePytestReportLines', () => {
  it('a session that collected nothing is a report listing no tests', () => {
    expect(parsePytestReportLines(START)).toEqual([]);
  });

  it('leaves out a last line cut short by a killed run, and keeps the test it belonged to', () => {
    const cut = TEARDOWN_PASSED.slice(0, 20);
    expect(parsePytestReportLines(START + CALL_PASSED + cut)).toEqual([
      { id: 't.py::a', status: 'passed' },
    ]);
    expect(parsePytestReportLines(START.slice(0, 10))).toEqual([]);
  });

  it('refuses a damaged line that is not the last, so the run falls back to the summary lines', () => {
    expect(() => parsePytestReportLines(START + '{"event": "te\n' + CALL_PASSED)).toThrow();
  });

  it('counts a pytest internal error as an error', () => {
    const internal = line({ event: 'internal', message: 'INTERNALERROR> boom' });
    expect(parsePytestReportLines(START + CALL_PASSED + TEARDOWN_PASSED + internal)).toEqual([
      { id: 't.py::a', status: 'passed' },
      { id: 'pytest internal error', status: 'error', message: 'INTERNALERROR> boom' },
    ]);
  });

  it('makes a call that ended the process an error named by where it was made', () => {
    const ended = (file: string | null, line: number | null) =>
      `${START}${CALL_PASSED}${TEARDOWN_PASSED}${JSON.stringify({ event: 'exit', call: 'os._exit(0)', file, line, nodeid: 't.py::b' })}\n`;
    const [, named] = parsePytestReportLines(ended('app/calc.py', 7));
    expect(named).toEqual({
      id: 'coachgate: process ended at app/calc.py:7',
      status: 'error',
      message: expect.stringMatching(
        /^os\._exit\(0\) at app\/calc\.py:7 ended the test process while t\.py::b ran/,
      ),
    });
    expect(parsePytestReportLines(ended(null, null))[1]?.id).toBe(
      'coachgate: process ended at code outside the project',
    );
  });

  it('clips long messages as the JUnit path does, without colour codes', () => {
    const failed = line({
      event: 'test',
      nodeid: 't.py::a',
      when: 'call',
      outcome: 'failed',
      message: `\u001b[31m${'x'.repeat(1000)}\u001b[0m`,
    });
    const [result] = parsePytestReportLines(START + failed + TEARDOWN_PASSED);
    expect(result?.message).toHaveLength(300);
    expect(result?.message).toMatch(/^x+…$/);
  });
});
