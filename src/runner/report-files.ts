import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { readRegularFile } from '../repo/read-text.js';
import { parseJUnitXml } from './report/junit.js';
import { parseTrx } from './report/trx.js';
import type { TestCaseResult } from './report/types.js';

/** A report file is read whole: large suites write large reports, a planted FIFO or device is refused. */
const MAX_REPORT_BYTES = 256 * 1024 * 1024;

/** Directories a build tool keeps its outputs in, never a module's own report directory. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', 'target', 'bin', 'obj', 'TestResults']);

/**
 * Per-test results from the report files a runner writes on its own, whatever started it: Maven
 * Surefire's `target/surefire-reports/TEST-*.xml` and dotnet's `TestResults/*.trx`, at the project root
 * or one module down. Only files written since `since` (the run's start) count: a report left by an
 * earlier build says nothing about this run.
 */
export async function runnerReportFiles(
  cwd: string,
  since: number,
  extraTrxDirectories: string[] = [],
): Promise<{ tests: TestCaseResult[]; source: string } | undefined> {
  const modules = ['.', ...(await subdirectories(cwd))];
  const surefire = await freshFiles(
    modules.map((module) => path.join(cwd, module, 'target', 'surefire-reports')),
    (name) => /^TEST-.*\.xml$/.test(name),
    since,
  );
  if (surefire.length > 0) {
    const texts = await Promise.all(
      surefire.map((file) => readRegularFile(file, MAX_REPORT_BYTES)),
    );
    return {
      tests: texts.flatMap((text) => parseJUnitXml(text, 'surefire')),
      source: 'Maven Surefire reports written by the run (target/surefire-reports/TEST-*.xml)',
    };
  }
  const trx = await freshFiles(
    [...extraTrxDirectories, ...modules.map((module) => path.join(cwd, module, 'TestResults'))],
    (name) => name.endsWith('.trx'),
    since,
  );
  if (trx.length > 0) {
    const texts = await Promise.all(trx.map((file) => readRegularFile(file, MAX_REPORT_BYTES)));
    return {
      tests: texts.flatMap((text) => parseTrx(text)),
      source: 'dotnet TRX report written by the run (*.trx)',
    };
  }
  return undefined;
}

async function subdirectories(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .filter((name) => !SKIPPED_DIRECTORIES.has(name));
}

/** Files in `directories` whose names match, modified at or after `since`, in name order. */
async function freshFiles(
  directories: string[],
  matches: (name: string) => boolean,
  since: number,
): Promise<string[]> {
  const found: string[] = [];
  for (const directory of directories) {
    const names = await readdir(directory).catch(() => [] as string[]);
    for (const name of names.filter(matches).sort()) {
      const file = path.join(directory, name);
      const modified = await stat(file).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      if (modified >= since) found.push(file);
    }
  }
  return found;
}
