import type { FileVersions } from '../integrity/integrity.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import type {
  LiteralUse,
  ProductLiterals,
  TestInput,
  TestInputFacts,
} from '../integrity/special-cased-inputs.js';
import { isJsFile } from '../scope/test-paths.js';
import { jsProductLiterals, jsTestInputs } from './js-literals.js';
import { loadTypeScript } from './typescript-parser.js';
import { findOnPath } from '../runner/platform.js';
import { PYTHON_LITERALS_SCRIPT } from './python-literals-script.js';
import { runPythonScript } from './python-test-facts.js';
import type { SourceFile } from './test-facts.js';

const SHOWN_ASSERTION = 100;

interface ScriptOutput {
  inputs: [string, number, number][];
  product: (
    | {
        uses: [string, number, LiteralUse['role'], number | null, number | null][];
        literals: [string, number][];
        held: string[];
      }
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
 * The literals of the tests' calls and assertions, and how the changed product files use literals:
 * Python's from its own `ast` in one sandboxed process (nothing when python3 cannot run: the rule is
 * a static hint, and the trusted runs still judge the code), JS/TS's from the TypeScript parser.
 */
export async function collectTestInputFacts(
  tests: SourceFile[],
  product: FileVersions[],
  python: string,
  policy: SandboxPolicy,
): Promise<TestInputFacts> {
  const [fromPython, fromJs] = await Promise.all([
    pythonFacts(tests, product, python, policy),
    jsFacts(tests, product),
  ]);
  return {
    inputs: [...fromPython.inputs, ...fromJs.inputs],
    product: [...fromPython.product, ...fromJs.product],
  };
}

const NONE: TestInputFacts = { inputs: [], product: [] };

async function jsFacts(tests: SourceFile[], product: FileVersions[]): Promise<TestInputFacts> {
  const testFiles = tests.filter((file) => isJsFile(file.path));
  const productFiles = product.filter((file) => isJsFile(file.path) && file.now !== undefined);
  if (testFiles.length === 0 || productFiles.length === 0) return NONE;
  await loadTypeScript();
  return {
    inputs: testFiles.flatMap((file) =>
      jsTestInputs(file.path, file.text).map(({ value, line }) => inputAt(file, value, line)),
    ),
    product: productFiles.map((file) => jsProductLiterals(file.path, file.now!, file.base)),
  };
}

async function pythonFacts(
  tests: SourceFile[],
  product: FileVersions[],
  python: string,
  policy: SandboxPolicy,
): Promise<TestInputFacts> {
  const testFiles = tests.filter((file) => file.path.endsWith('.py'));
  const productFiles = product.filter((file) => file.path.endsWith('.py') && file.now);
  if (testFiles.length === 0 || productFiles.length === 0) return NONE;
  if (!python.includes('/') && !(await findOnPath(python))) return NONE;
  const run = await runPythonScript(
    PYTHON_LITERALS_SCRIPT,
    { tests: testFiles, product: productFiles },
    python,
    policy,
  );
  const parsed = run instanceof Error || run.failed ? undefined : parseOutput(run.stdout);
  if (parsed === undefined) return NONE;
  return {
    inputs: parsed.inputs.map(([value, index, line]) => inputAt(testFiles[index]!, value, line)),
    product: parsed.product.flatMap((result, index): ProductLiterals[] =>
      'error' in result
        ? []
        : [
            {
              path: productFiles[index]!.path,
              held: result.held,
              literals: result.literals.map(([value, line]) => ({ value, line })),
              uses: result.uses.map(([value, line, role, table, scope]) => ({
                value,
                line,
                role,
                ...(table === null ? {} : { table }),
                ...(scope === null ? {} : { scope }),
              })),
            },
          ],
    ),
  };
}

/** A test input with the line it was read from, as written. */
function inputAt(file: SourceFile, value: string, line: number): TestInput {
  const text = file.text.split(/\r?\n/)[line - 1]?.trim() ?? '';
  return { value, file: file.path, line, assertion: text.slice(0, SHOWN_ASSERTION) };
}
