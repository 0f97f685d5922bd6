import path from 'node:path';
import { PYTHON_DOCSTRINGS_SCRIPT } from '../analysis/python-docstrings-script.js';
import { runPythonScript } from '../analysis/python-test-facts.js';
import type { SandboxPolicy } from '../config/sandbox-policy.js';
import { isTestSideFile } from '../scope/test-paths.js';
import { gitQuery } from '../repo/git.js';
import { lstatIfPresent } from '../repo/present-entries.js';
import { readRegularFile } from '../repo/read-text.js';
import { findOnPath } from '../runner/platform.js';
import { serverPython } from '../runner/pyenv.js';

/** What in a base's files makes its runner collect Python doctests. */
const PYTHON_DOCTEST_RUNNERS = '--doctest-(modules|glob)|DocTestSuite|doctest\\.testmod';

/** Whether the base runs Python doctests: its config or tests name them (one `git grep`). */
export async function runsPythonDoctests(worktree: string, commit: string): Promise<boolean> {
  return gitQuery(worktree, ['grep', '-l', '-E', '-e', PYTHON_DOCTEST_RUNNERS, commit, '--']).then(
    (found) => found.trim() !== '',
    () => false, // exit 1: no match
  );
}

/**
 * Doctests the Player wrote in product code, for the fail-to-pass run ("your tests on the base
 * code"): each Python source among `files` (present in `baseDir` and in the worktree) whose
 * docstrings' examples the Player changed, as the base's code with the Player's docstrings spliced in
 * (src/analysis/python-docstrings-script.ts). Without it the base's own docstrings run there, so a new
 * example would "also pass on the base" when the base's old one did, and never when its owner had
 * none. Empty when the base runs no Python doctests, or python3 cannot run: nothing is spliced then.
 */
export async function pythonDoctestSplices(
  worktree: string,
  base: { dir: string; commit: string },
  files: readonly string[],
  policy: SandboxPolicy,
): Promise<Map<string, string>> {
  const pairs: { path: string; base: string; player: string }[] = [];
  for (const file of files.filter((name) => name.endsWith('.py') && !isTestSideFile(name))) {
    const [player, original] = [await readSource(worktree, file), await readSource(base.dir, file)];
    if (player === undefined || original === undefined || player === original) continue;
    if (player.includes('>>>') || original.includes('>>>'))
      pairs.push({ path: file, base: original, player });
  }
  const spliced = new Map<string, string>();
  if (pairs.length === 0 || !(await runsPythonDoctests(worktree, base.commit))) return spliced;
  const python = await serverPython();
  if (!python.includes('/') && !(await findOnPath(python))) return spliced;
  const run = await runPythonScript(PYTHON_DOCSTRINGS_SCRIPT, pairs, python, policy);
  const results = run instanceof Error || run.failed ? [] : parsed(run.stdout);
  results.forEach((result, index) => {
    if (typeof result?.text === 'string') spliced.set(pairs[index]!.path, result.text);
  });
  return spliced;
}

/** A file's text, when it is a regular file (a link is laid as a link: never spliced). */
async function readSource(root: string, file: string): Promise<string | undefined> {
  if (!lstatIfPresent(path.join(root, file))?.isFile()) return undefined;
  return readRegularFile(path.join(root, file)).catch(() => undefined);
}

function parsed(stdout: string): ({ text?: string | null } | undefined)[] {
  try {
    const value: unknown = JSON.parse(stdout);
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}
