import { describe, expect, it } from 'vitest';
import { newFindings, parseLintOutput } from '../../src/quality-gates/lint-findings.js';
import { findingsGate } from '../../src/quality-gates/toolchain-rules.js';

const root = '/repo';
const parse = (output: string) => parseLintOutput(output, root)!;

describe('lint output formats', () => {
  it('reads ESLint JSON errors only (warnings do not fail), with paths relative to the worktree', () => {
    const output = JSON.stringify([
      {
        filePath: '/repo/src/a.js',
        messages: [
          { ruleId: 'no-var', severity: 2, message: 'Unexpected var.', line: 3 },
          { ruleId: 'semi', severity: 1, message: 'Missing semicolon.', line: 4 },
        ],
      },
    ]);
    expect(parse(`> lint\n${output}`)).toEqual({
      format: 'eslint-json',
      findings: [{ rule: 'no-var', file: 'src/a.js', line: 3, message: 'Unexpected var.' }],
    });
  });

  it('reads Ruff JSON, Ruff/flake8 text, tsc, mypy and golangci text and JSON', () => {
    expect(
      parse(
        JSON.stringify([
          {
            code: 'F401',
            filename: '/repo/app.py',
            message: '`os` imported but unused',
            location: { row: 1, column: 8 },
          },
        ]),
      ).findings[0],
    ).toMatchObject({ rule: 'F401', file: 'app.py', line: 1 });
    expect(parse('app.py:1:8: F401 [*] `os` imported but unused\nFound 1 error.\n')).toMatchObject({
      format: 'flake8',
      findings: [{ rule: 'F401', file: 'app.py', line: 1 }],
    });
    expect(
      parse("src/a.ts(2,7): error TS2322: Type 'string' is not assignable to type 'number'.\n"),
    ).toMatchObject({ format: 'tsc', findings: [{ rule: 'TS2322', file: 'src/a.ts', line: 2 }] });
    expect(
      parse(
        'app.py:3: error: Incompatible return value type (got "int", expected "str")  [return-value]\nFound 1 error in 1 file\n',
      ),
    ).toMatchObject({
      format: 'mypy',
      findings: [{ rule: 'return-value', file: 'app.py', line: 3 }],
    });
    expect(parse('main.go:7:2: ineffectual assignment to x (ineffassign)\n')).toMatchObject({
      format: 'golangci-text',
      findings: [{ rule: 'ineffassign', file: 'main.go', line: 7 }],
    });
    expect(
      parse(
        JSON.stringify({
          Issues: [
            {
              FromLinter: 'errcheck',
              Text: 'Error return value is not checked',
              Pos: { Filename: 'main.go', Line: 9 },
            },
          ],
        }),
      ).findings,
    ).toEqual([
      { rule: 'errcheck', file: 'main.go', line: 9, message: 'Error return value is not checked' },
    ]);
  });

  it('reads cargo clippy JSON error messages and skips warnings and the closing summary', () => {
    const line = (level: string, code: string | null, spans: unknown[]) =>
      JSON.stringify({
        reason: 'compiler-message',
        message: { level, message: `${level} here`, code: code ? { code } : null, spans },
      });
    const span = { file_name: 'src/lib.rs', line_start: 4, is_primary: true };
    const output = [
      line('error', 'clippy::eq_op', [span]),
      line('warning', 'unused', [span]),
      line('error', null, []),
      '{"reason":"build-finished","success":false}',
    ].join('\n');
    expect(parse(output)).toEqual({
      format: 'cargo-json',
      findings: [{ rule: 'clippy::eq_op', file: 'src/lib.rs', line: 4, message: 'error here' }],
    });
  });

  it('returns undefined for output it does not recognise', () => {
    expect(parseLintOutput('Everything is broken\n', root)).toBeUndefined();
  });
});

describe('no new errors against the base', () => {
  const at = (line: number, message = "'x' is assigned a value but never used") => ({
    rule: 'no-unused-vars',
    file: 'src/a.js',
    line,
    message,
  });

  it('ignores moved lines and renumbered messages, but counts a second occurrence of the same error', () => {
    expect(newFindings([at(10)], [at(3)])).toEqual([]);
    expect(newFindings([at(10, 'expected 3 args'), at(11)], [at(3, 'expected 2 args')])).toEqual([
      at(11),
    ]);
    expect(newFindings([at(3), at(9)], [at(3)])).toEqual([at(9)]);
  });

  it('falls back to the exit code when the output is unrecognised', () => {
    const outcome = { exit_code: 1, timed_out: false, duration_ms: 10, summary: '' };
    const gate = findingsGate('lint', 'make lint', outcome, undefined, undefined);
    expect(gate).toMatchObject({ passed: false, judged_by: 'exit code' });
    expect(gate.reason).toMatch(/not in a recognised format/);
    expect(
      findingsGate('lint', 'make lint', { ...outcome, exit_code: 0 }, undefined, undefined).passed,
    ).toBe(true);
  });
});
