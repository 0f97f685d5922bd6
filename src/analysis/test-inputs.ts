import type { FileVersions } from '../core/integrity.js';
import type { SandboxPolicy } from '../core/sandbox-policy.js';
import type { LiteralUse, ProductLiterals, TestInputFacts } from '../core/special-cased-inputs.js';
import { findOnPath } from '../runner/platform.js';
import { PYTHON_LITERALS_SCRIPT } from './python-literals-script.js';
import { runPythonScript } from './python-test-facts.js';
import type { SourceFile } from './test-facts.js';

const SHOWN_ASSERTION = 100;

interface ScriptOutput {
  inputs: [string, number, number][];
  product: (
    | { uses: [string, number, LiteralUse['role'], number | null][]; held: string[] }
    | { error: string }
  )[];
}

function parseOutput(stdout: string): ScriptOutput | undefined {
  try {
    return JSON.parse(stdout) as ScriptOutput;
  } catch {
    return undefined;
  }
}

/**
 * The literals of the tests' calls and assertions, and how the changed product files use literals,
 * from Python's own `ast` in one sandboxed process. Python only; nothing when python3 cannot run (the
 * rule is a static hint, and the trusted runs still judge the code).
 */
export async function collectTestInputFacts(
  tests: SourceFile[],
  product: FileVersions[],
  python: string,
  policy: SandboxPolicy,
): Promise<TestInputFacts> {
  const testFiles = tests.filter((file) => file.path.endsWith('.py'));
  const productFiles = product.filter((file) => file.path.endsWith('.py') && file.now);
  const none: TestInputFacts = { inputs: [], product: [] };
  if (testFiles.length === 0 || productFiles.length === 0) return none;
  if (!python.includes('/') && !(await findOnPath(python))) return none;
  const run = await runPythonScript(
    PYTHON_LITERALS_SCRIPT,
    { tests: testFiles, product: productFiles },
    python,
    policy,
  );
  if (run instanceof Error || run.failed) return none;
  const parsed = parseOutput(run.stdout);
  if (parsed === undefined) return none;
  return {
    inputs: parsed.inputs.map(([value, index, line]) => {
      const file = testFiles[index]!;
      const text = file.text.split(/\r?\n/)[line - 1]?.trim() ?? '';
      return { value, file: file.path, line, assertion: text.slice(0, SHOWN_ASSERTION) };
    }),
    product: parsed.product.flatMap((result, index): ProductLiterals[] =>
      'error' in result
        ? []
        : [
            {
              path: productFiles[index]!.path,
              held: result.held,
              uses: result.uses.map(([value, line, role, table]) => ({
                value,
                line,
                role,
                ...(table === null ? {} : { table }),
              })),
            },
          ],
    ),
  };
}
