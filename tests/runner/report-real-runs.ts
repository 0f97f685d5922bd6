/**
 * Runs real test runners on small generated projects in temp dirs and returns what the lead's run
 * would capture: exit code, signal, interleaved stdout+stderr, and the report file.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { classifyFailure, type FailureClassification } from '../../src/runner/classify.js';
import { decideStatus } from '../../src/runner/outcome.js';
import { countsFromTests } from '../../src/runner/report/counts.js';
import { parseJUnitXml } from '../../src/runner/report/junit.js';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import type { RunStatus, TestCaseResult, TestCounts } from '../../src/runner/report/types.js';
import { summarizeOutput } from '../../src/runner/summary.js';

export interface RealRun {
  exit_code: number | null;
  signal: string | null;
  output: string;
  /** The report file's text, when the runner wrote one. */
  report: string | undefined;
}

export type ProjectFiles = Record<string, string>;

const REPOSITORY_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VITEST_BIN = path.join(REPOSITORY_ROOT, 'node_modules/.bin/vitest');
export const CARGO_BIN = process.env.CARGO ?? path.join(os.homedir(), '.cargo/bin/cargo');

/** Builds the argv from the project directory and the path the report should be written to. */
type Command = (projectDir: string, reportPath: string) => string[];

export function runInProject(
  files: ProjectFiles,
  command: Command,
  env: NodeJS.ProcessEnv = {},
): RealRun {
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coachgate-report-test-'));
  try {
    const projectDir = path.join(workDir, 'project');
    for (const [name, content] of Object.entries(files)) {
      const file = path.join(projectDir, name);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, content);
    }
    fs.mkdirSync(projectDir, { recursive: true });
    const reportPath = path.join(workDir, 'report.xml');
    const logPath = path.join(workDir, 'output.log');
    // One descriptor for stdout and stderr keeps their real interleaving, as a terminal would show it.
    const log = fs.openSync(logPath, 'w');
    const [program = '', ...args] = command(projectDir, reportPath);
    const result = spawnSync(program, args, {
      cwd: projectDir,
      env: { ...childEnvironment(), ...env },
      stdio: ['ignore', log, log],
      timeout: 120_000,
    });
    fs.closeSync(log);
    if (result.error) throw result.error;
    return {
      exit_code: result.status,
      signal: result.signal,
      output: fs.readFileSync(logPath, 'utf8'),
      report: fs.existsSync(reportPath) ? fs.readFileSync(reportPath, 'utf8') : undefined,
    };
  } finally {
    fs.rmSync(workDir, { recursive: true, force: true });
  }
}

/** The outer vitest marks its workers through these; a nested runner must not inherit them. */
function childEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !key.startsWith('VITEST') && key !== 'NODE_OPTIONS' && key !== 'TEST',
    ),
  );
}

export function runPytest(files: ProjectFiles, extraArgs: string[] = []): RealRun {
  return runInProject(files, (_dir, report) => [
    'python3',
    '-m',
    'pytest',
    `--junitxml=${report}`,
    '-p',
    'no:cacheprovider',
    ...extraArgs,
  ]);
}

export function runNodeTest(files: ProjectFiles, node = process.execPath): RealRun {
  return runInProject(files, (_dir, report) => [
    node,
    '--test',
    '--test-reporter=spec',
    '--test-reporter-destination=stdout',
    '--test-reporter=junit',
    `--test-reporter-destination=${report}`,
  ]);
}

export function runVitest(files: ProjectFiles): RealRun {
  return runInProject(files, (dir, report) => [
    VITEST_BIN,
    'run',
    '--root',
    dir,
    '--reporter=default',
    '--reporter=junit',
    `--outputFile=${report}`,
  ]);
}

export interface Interpretation {
  tests: TestCaseResult[];
  counts: TestCounts;
  status: RunStatus;
  summary: string;
  classification: FailureClassification;
}

/** The interpretation chain the run tool applies: report → counts → status → summary → class. */
export function interpret(
  run: RealRun,
  parseReport: (run: RealRun) => TestCaseResult[],
  firstPartyModules: string[] = [],
): Interpretation {
  const tests = parseReport(run);
  // As the run tool does: a report that was read decides the counts, even when it lists no test.
  const counts =
    run.report !== undefined || tests.length > 0
      ? countsFromTests(tests)
      : countsFromSummaryLines(run.output);
  const status = decideStatus({
    exit_code: run.exit_code,
    signal: run.signal,
    timed_out: false,
    counts,
    output: run.output,
  });
  return {
    tests,
    counts: counts ?? { total: 0, passed: 0, failed: 0, errors: 0, skipped: 0 },
    status,
    summary: summarizeOutput(run.output),
    classification: classifyFailure({
      status,
      output: run.output,
      exit_code: run.exit_code,
      firstPartyModules,
      signal: run.signal,
    }),
  };
}

export const junitReport = (run: RealRun): TestCaseResult[] =>
  run.report ? parseJUnitXml(run.report) : [];
