/**
 * A cited test on a run whose runner names failing tests only (uvu). Such a run cannot show that a
 * test passed, only that no test by that name failed. So the name must also be written, as a test's
 * title, in a test file the run ran: a name that is not there, or that failed, is refused.
 */

/** A failures-only run, as the requirements check reads it. */
export interface FailuresOnlyRun {
  /** The test files the run ran, worktree-relative, comments and docstrings blanked. */
  files: ReadonlyMap<string, string>;
  /** Every failing test the runner named (`name`, `suite > name`). */
  failing: readonly string[];
}

export type NamedTestOutcome = { ok: true; id: string } | { ok: false; problem: string };

/** Whether `test` (`title`, `suite > title`, `file > [suite >] title`) ran and did not fail. */
export function checkNamedTest(test: string, run: FailuresOnlyRun): NamedTestOutcome {
  const parts = test.split(' > ').map((part) => part.trim());
  const file = [...run.files.keys()].find(
    (ran) => ran === parts[0] || ran.endsWith(`/${parts[0]}`),
  );
  const names = file && parts.length > 1 ? parts.slice(1) : parts;
  const title = names.at(-1)!;
  const suite = names.length === 2 ? names[0] : undefined;
  if (names.length > 2 || title === '')
    return {
      ok: false,
      problem: `test ${test} is not a uvu test name (\`[file > ][suite > ]title\`)`,
    };
  if (run.failing.some((failed) => failed.split(' > ').at(-1) === title))
    return { ok: false, problem: `test ${test} failed in the latest run` };
  const searched = file ? [file] : [...run.files.keys()];
  const found = searched.find((ran) => declaresTest(run.files.get(ran)!, title, suite));
  if (found) return { ok: true, id: [found, ...names].join(' > ') };
  return {
    ok: false,
    problem:
      `test ${test} cannot be checked: this runner names failing tests only, and no test file ` +
      `the latest run ran declares a test titled "${title}"` +
      (run.files.size === 0
        ? ' (no file it ran could be found in the worktree)'
        : ` (searched: ${searched.join(', ')})`),
  };
}

/**
 * Whether code declares a test titled `title` that runs: a call `test('title'`, `math('title'`,
 * `uvu.test('title'` or `….only('title'` (never `.skip`), and, when the file focuses tests with
 * `.only`, one of those.
 */
function declaresTest(code: string, title: string, suite: string | undefined): boolean {
  const callees = [
    ...code.matchAll(
      new RegExp(`(?<![\\w$.])(?<callee>[\\w$]+(?:\\.[\\w$]+)*)\\(\\s*${literal(title)}`, 'g'),
    ),
  ].map((call) => call.groups!.callee!);
  const focused = /\.only\(/.test(code);
  const runs = callees.some(
    (callee) => !callee.endsWith('.skip') && (!focused || callee.endsWith('.only')),
  );
  return runs && (suite === undefined || new RegExp(`\\(\\s*${literal(suite)}`).test(code));
}

/** A pattern for `text` as a string literal in any of JavaScript's three quotes. */
function literal(text: string): string {
  return `(?<quote>['"\`])${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\k<quote>`;
}

/**
 * The worktree files a run named relative to its directory (uvu prints `sum.js` for `test/sum.js`):
 * the one directory under which every name is a file. None when no directory, or several, hold them
 * all: an ambiguous name could point at a file the run never ran.
 */
export function ranFiles(names: readonly string[], worktreeFiles: readonly string[]): string[] {
  const [first] = names;
  if (first === undefined) return [];
  const present = new Set(worktreeFiles);
  const directories = worktreeFiles
    .filter((file) => file === first || file.endsWith(`/${first}`))
    .map((file) => file.slice(0, file.length - first.length))
    .filter((directory) => names.every((name) => present.has(directory + name)));
  return directories.length === 1 ? names.map((name) => directories[0] + name) : [];
}
