import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCargoTestOutput } from '../../src/runner/report/cargo.js';
import { RESULT_SEPARATOR } from '../../src/runner/summary.js';
import {
  CARGO_BIN,
  interpret,
  runInProject,
  type Interpretation,
  type RealRun,
} from './report-real-runs.js';

const crate = (expected: number): Record<string, string> => ({
  'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
  'src/lib.rs': [
    '/// Adds two numbers.',
    '/// ```',
    '/// assert_eq!(calc::add(1, 2), 3);',
    '/// ```',
    'pub fn add(a: u64, b: u64) -> u64 { a + b }',
    '',
    '#[cfg(test)]',
    'mod tests {',
    '    use super::*;',
    '    #[test]',
    '    fn it_adds() { assert_eq!(add(2, 2), 4); }',
    '    #[test]',
    `    fn it_doubles() { assert_eq!(add(2, 2), ${expected}, "doubling is broken"); }`,
    '    #[test]',
    '    #[ignore = "needs a database"]',
    '    fn reads_db() {}',
    '}',
    '',
  ].join('\n'),
});

const runCargoTest = (files: Record<string, string>): RealRun =>
  runInProject(files, () => [CARGO_BIN, 'test', '--offline'], {
    PATH: `${path.dirname(CARGO_BIN)}${path.delimiter}${process.env.PATH ?? ''}`,
    CARGO_TERM_COLOR: 'never',
  });

const parseCargo = (run: RealRun) => parseCargoTestOutput(run.output);
const runs = {} as Record<'passing' | 'failing', { run: RealRun; result: Interpretation }>;

const cargoMissing = !fs.existsSync(CARGO_BIN);
// Skipped only when the toolchain is absent, and the title says so in the test output.
describe.skipIf(cargoMissing)(
  `real cargo test runs (offline crate without dependencies), interpreted${cargoMissing ? ` — skipped: cargo not found at ${CARGO_BIN}` : ''}`,
  () => {
    beforeAll(() => {
      for (const [name, expected] of [
        ['passing', 4],
        ['failing', 5],
      ] as const) {
        const run = runCargoTest(crate(expected));
        runs[name] = { run, result: interpret(run, parseCargo) };
      }
    });

    it('passing: unit tests and doc tests by path, ignored tests skipped with their reason', () => {
      const { run, result } = runs.passing;
      expect(run.exit_code).toBe(0);
      expect(result.tests).toEqual(
        expect.arrayContaining([
          { id: 'tests::it_adds', status: 'passed' },
          { id: 'tests::it_doubles', status: 'passed' },
          { id: 'tests::reads_db', status: 'skipped', message: 'needs a database' },
          { id: expect.stringMatching(/^src\/lib\.rs - add \(line \d+\)$/), status: 'passed' },
        ]),
      );
      expect(result.counts).toEqual({ total: 4, passed: 3, failed: 0, errors: 0, skipped: 1 });
      expect(result.status).toBe('passed');
    });

    it('failing: the panic message is the failure message, the summary shows it, then the test result line', () => {
      const { run, result } = runs.failing;
      expect(run.exit_code).toBe(101);
      expect(result.tests).toContainEqual({
        id: 'tests::it_doubles',
        status: 'failed',
        message: expect.stringMatching(
          /panicked at src\/lib\.rs:13:\d+:\nassertion `left == right` failed: doubling is broken/,
        ),
      });
      expect(result.status).toBe('failed');
      expect(result.classification.failure_class).toBe('code');
      expect(result.classification.advice).toContain('src/lib.rs:13');
      const [errorPart = '', resultPart = ''] = result.summary.split(RESULT_SEPARATOR);
      expect(errorPart).toMatch(/^---- tests::it_doubles stdout ----$/m);
      expect(errorPart).toContain('doubling is broken');
      expect(resultPart).toMatch(/test result: FAILED\. 1 passed; 1 failed; 1 ignored;/);
    });

    it("an error cargo stops at keeps its 'Caused by:' chain in the summary, down to the root cause", () => {
      const files = crate(4);
      files['Cargo.toml'] += 'helper = { path = "missing-helper" }\n';
      const run = runCargoTest(files);
      const { summary, status } = interpret(run, parseCargo);
      expect(run.exit_code).toBe(101);
      expect(status).toBe('error');
      expect(summary).toMatch(/^error: failed to get `helper` as a dependency/);
      expect(summary).toMatch(/Caused by:\n\s+failed to load source for dependency `helper`/);
      expect(summary).toMatch(/Caused by:\n\s+No such file or directory \(os error 2\)$/);
    });
  },
);
