import type { TestFileFacts } from '../core/integrity.js';
import { scanTestFactsByLine } from './line-scan-test-facts.js';
import { PYTHON_TEST_FACTS_SCRIPT } from './python-test-facts-script.js';
import type { SourceFile } from './test-facts.js';

const PYTHON_TIMEOUT_MS = 60_000;

type ParsedByPython = Omit<TestFileFacts, 'parser'> | { error: string };

/**
 * Facts for Python files from Python's own `ast`, in one python3 process for the whole batch. A file
 * that does not parse, or every file when python3 cannot run, falls back to the line scan, which records why.
 */
export async function extractPythonTestFacts(
  files: SourceFile[],
  python: string,
): Promise<TestFileFacts[]> {
  if (files.length === 0) return [];
  const { execa } = await import('execa');
  const run = await execa(python, ['-c', PYTHON_TEST_FACTS_SCRIPT], {
    input: JSON.stringify(files),
    reject: false,
    timeout: PYTHON_TIMEOUT_MS,
    maxBuffer: 256 * 1024 * 1024,
    env: { PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
  });
  const parsed = run.failed ? undefined : parseOutput(run.stdout, files.length);
  if (parsed === undefined) {
    const reason =
      run.code === 'ENOENT'
        ? `${python} was not found`
        : `${python} could not analyse the files (${lastLine(run.stderr) || run.shortMessage || 'unreadable output'})`;
    return files.map((file) => scanTestFactsByLine(file.path, file.text, reason));
  }
  return files.map((file, index) => {
    const result = parsed[index] as ParsedByPython;
    if ('error' in result) return scanTestFactsByLine(file.path, file.text, result.error);
    return { ...result, parser: 'python_ast' };
  });
}

function parseOutput(stdout: string, expected: number): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(stdout);
    return Array.isArray(parsed) && parsed.length === expected ? parsed : undefined;
  } catch {
    return undefined;
  }
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1)?.trim() ?? '';
}
