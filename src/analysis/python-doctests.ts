import type { DoctestExample } from '../integrity/doctest-examples.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { SandboxUnavailableError } from '../sandbox/run.js';
import { PYTHON_DOCTESTS_SCRIPT } from './python-doctests-script.js';
import { runPythonScript } from './python-test-facts.js';

/**
 * The doctest examples of Python modules as doctest's own parser finds them
 * (src/analysis/python-doctests-script.ts), one python3 process for the batch, confined as the
 * other analysis scripts are. undefined for a text that does not parse, or for every text when
 * python3 cannot run: the caller reads those by line pattern.
 */
export async function pythonDoctestExamples(
  /** Module texts, or `{file}`: a text file doctest runs whole. */
  texts: readonly (string | { file: string })[],
  python: string,
  policy: SandboxPolicy,
): Promise<(DoctestExample[] | undefined)[]> {
  if (texts.length === 0) return [];
  const run = await runPythonScript(PYTHON_DOCTESTS_SCRIPT, texts, python, policy);
  const parsed =
    run instanceof SandboxUnavailableError || run.failed ? undefined : read(run.stdout);
  if (parsed?.length !== texts.length) return texts.map(() => undefined);
  return parsed.map((result) => (Array.isArray(result) ? (result as DoctestExample[]) : undefined));
}

function read(stdout: string): unknown[] | undefined {
  try {
    const parsed: unknown = JSON.parse(stdout);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
