import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isRunnerLoadedFile } from '../core/test-paths.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import { gitQuery, listWorkingFiles } from './git.js';
import { WORKTREES_DIRECTORY } from './worktrees.js';

/**
 * Ignored directories a snapshot borrows from the worktree (linked, not copied): the installed toolchain
 * the Player's tests run with. Everything else ignored stays out, so nothing hidden from git can ride along.
 * Cargo's `target` is build output, not a toolchain: shared, it hands a snapshot the Player's build of
 * the code (extracted files keep the commit's older mtimes), so each snapshot builds its own.
 */
export const BORROWED_DIRECTORIES = ['.venv', 'venv', 'node_modules'];

/** The project virtualenvs whose site hooks every Python start-up runs. */
export const VIRTUALENVS = ['.venv', 'venv'];

/**
 * Ignored directories no runner collects from by default and tools fill with their own output: not walked
 * when looking for hidden files, so a fingerprint stays cheap in a repository with build output.
 */
const UNWALKED_DIRECTORIES = new Set([
  ...BORROWED_DIRECTORIES,
  'target',
  '.git',
  '__pycache__',
  '.pytest_cache',
  '.mypy_cache',
  '.ruff_cache',
  '.tox',
  '.nox',
  '.cache',
  'dist',
  'build',
  'coverage',
]);

/** Links checked at once by linksIntoStore. */
const PARALLEL_CHECKS = 64;

const SITE_HOOK = /^(?:sitecustomize\.py|usercustomize\.py|.*\.pth)$/;

/**
 * Files git ignores (.gitignore, .git/info/exclude, the global excludes) that the test runner still loads:
 * conftest.py, runner config, test files and test helpers. Ignored directories are walked too, except
 * toolchains and tool output (UNWALKED_DIRECTORIES), whose site hooks are listed by {@link siteHookFiles}.
 */
export async function hiddenRunnerFiles(worktree: string): Promise<string[]> {
  const ignored = (directories: string[]) =>
    gitQuery(worktree, [
      'ls-files',
      '-z',
      '--others',
      '--ignored',
      '--exclude-standard',
      ...directories,
    ]).then((output) => output.split('\0').filter(Boolean));
  const listed = await ignored(['--directory']);
  // Task worktrees under .guardkit/worktrees/ are other tasks' trees, fingerprinted on their own.
  const walk = listed.filter(
    (entry) =>
      entry.endsWith('/') &&
      !entry.startsWith(STORE_PREFIX) &&
      !entry.startsWith(`${WORKTREES_DIRECTORY}/`) &&
      !UNWALKED_DIRECTORIES.has(path.posix.basename(entry)),
  );
  const files = [
    ...listed.filter((entry) => !entry.endsWith('/')),
    ...(walk.length > 0 ? await ignored(['--', ...walk]) : []),
  ];
  return [...new Set(files)]
    .filter((file) => !file.startsWith(STORE_PREFIX) && isRunnerLoadedFile(file))
    .sort();
}

/**
 * Site hooks in the project's own virtualenvs (`.pth` files, sitecustomize.py, usercustomize.py) and the
 * interpreter links: what every Python start-up in a run loads before any test.
 */
export async function siteHookFiles(worktree: string): Promise<string[]> {
  const found: string[] = [];
  for (const venv of VIRTUALENVS) {
    const python = `${venv}/bin/python`;
    if (!(await lstat(path.join(worktree, python)).catch(() => undefined))) continue;
    found.push(python);
    const lib = path.join(worktree, venv, 'lib');
    for (const version of await readdir(lib).catch(() => [] as string[])) {
      const sitePackages = `${venv}/lib/${version}/site-packages`;
      for (const name of await readdir(path.join(worktree, sitePackages)).catch(() => []))
        if (SITE_HOOK.test(name)) found.push(`${sitePackages}/${name}`);
    }
  }
  return found.sort();
}

/** Worktree-relative path of `.git/info/exclude` (in the common git dir for a linked worktree). */
export async function excludeFile(worktree: string): Promise<string> {
  const file = (await gitQuery(worktree, ['rev-parse', '--git-path', 'info/exclude'])).trim();
  return path.relative(worktree, path.resolve(worktree, file));
}

/**
 * Tracked or untracked files that are symbolic links resolving into the store: the server writes there and
 * excludes it from the tree fingerprint, so code behind such a link could change after an approval.
 */
export async function linksIntoStore(worktree: string): Promise<string[]> {
  const store = path.join(await realpath(worktree), STORE_PREFIX);
  const files = (await listWorkingFiles(worktree)).filter((file) => !file.startsWith(STORE_PREFIX));
  const intoStore = async (file: string) => {
    const absolute = path.join(worktree, file);
    const info = await lstat(absolute).catch(() => undefined);
    if (!info?.isSymbolicLink()) return false;
    // A dangling link is judged by where it points: its target may be created in the store later.
    const directory = path.dirname(absolute);
    const target =
      (await realpath(absolute).catch(() => undefined)) ??
      path.resolve(await realpath(directory).catch(() => directory), await readlink(absolute));
    return (target + path.sep).startsWith(store);
  };
  const found: string[] = [];
  for (let start = 0; start < files.length; start += PARALLEL_CHECKS) {
    const batch = files.slice(start, start + PARALLEL_CHECKS);
    const flags = await Promise.all(batch.map(intoStore));
    found.push(...batch.filter((_, index) => flags[index]));
  }
  return found;
}
