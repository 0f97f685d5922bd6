import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestFileFacts } from '../integrity/integrity.js';
import { childRun, type ChildRun } from '../repo/child-output.js';
import { findOnPath } from '../runner/platform.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { sandboxedCommand, SandboxUnavailableError } from '../sandbox/run.js';
import { scanTestFactsByLine } from './line-scan-test-facts.js';
import { PYTHON_TEST_FACTS_SCRIPT } from './python-test-facts-script.js';
import type { SourceFile } from './source-text.js';

const PYTHON_TIMEOUT_MS = 60_000;

type ParsedByPython = Omit<TestFileFacts, 'parser'> | { error: string };

/**
 * Facts for Python files from Python's own `ast`, in one python3 process for the whole batch, confined
 * by the base's sandbox policy. A file that does not parse, or every file when python3 cannot run (or
 * the policy refuses to run it), falls back to the line scan, which records why.
 */
export async function extractPythonTestFacts(
  files: SourceFile[],
  python: string,
  policy: SandboxPolicy,
): Promise<TestFileFacts[]> {
  if (files.length === 0) return [];
  // Looked up here: inside the sandbox a missing interpreter would be bwrap's error, not ENOENT.
  if (!python.includes('/') && !(await findOnPath(python)))
    return files.map((file) =>
      scanTestFactsByLine(file.path, file.text, `${python} was not found`),
    );
  const run = await runPythonScript(PYTHON_TEST_FACTS_SCRIPT, files, python, policy);
  if (run instanceof SandboxUnavailableError)
    return files.map((file) =>
      scanTestFactsByLine(file.path, file.text, `${python} was not run: ${run.message}`),
    );
  return factsFrom(run, files, python);
}

/**
 * Runs a standard-library script with `input` as JSON on stdin. The interpreter may be a worktree
 * virtualenv's: sandboxed like a test run, in a private directory, with -I so neither the current
 * directory nor PYTHON* variables can put the Player's modules in front of the standard library, and
 * -S so no .pth file of its site-packages runs (python starts in 15 ms instead of 70 ms here).
 * `sandbox.mode: required` without a sandbox: the error, and the interpreter is not run.
 */
export async function runPythonScript(
  script: string,
  input: unknown,
  python: string,
  policy: SandboxPolicy,
): Promise<PythonRun | SandboxUnavailableError> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'coachgate-ast-'));
  try {
    const command = await sandboxedCommand(
      [python, '-I', '-S', '-c', script],
      scratch,
      { PATH: process.env.PATH ?? '', PYTHONDONTWRITEBYTECODE: '1', PYTHONIOENCODING: 'utf-8' },
      { policy },
    ).catch((error: unknown) => {
      if (error instanceof SandboxUnavailableError) return error;
      throw error;
    });
    if (command instanceof SandboxUnavailableError) return command;
    const [program, ...args] = command.argv;
    return await childRun(program!, args, {
      cwd: scratch,
      input: JSON.stringify(input),
      timeoutMs: PYTHON_TIMEOUT_MS,
      maxBytes: 256 * 1024 * 1024,
      env: command.env,
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

export type PythonRun = ChildRun;

function factsFrom(run: PythonRun, files: SourceFile[], python: string): TestFileFacts[] {
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
