import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { isRunnerLoadedFile } from '../scope/test-paths.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import { eventLoopSlices } from './event-loop-slices.js';
import { gitQuery, listWorkingFiles } from './git.js';
import { entriesIfPresent } from './present-entries.js';
import { WORKTREES_DIRECTORY } from './worktrees.js';

/**
 * Ignored directories a snapshot borrows from the worktree (linked, not copied): the installed toolchain
 * the Player's tests run with. Everything else ignored stays out, so nothing hidden from git can ride along.
 * Cargo's `target` is build output, not a toolchain: shared, it hands a snapshot the Player's build of
 * the code (a snapshot's files carry fixed times from 2000), so each snapshot builds its own.
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
 * toolchains and tool output (UNWALKED_DIRECTORIES), and toolchains inside them; the project's own
 * virtualenvs' site hooks are listed by {@link siteHookFiles}.
 */
export async function hiddenRunnerFiles(worktree: string): Promise<string[]> {
  const listing = ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'];
  const listed = (await gitQuery(worktree, listing)).split('\0').filter(Boolean);
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
    ...(await filesUnder(worktree, walk)),
  ];
  return [...new Set(files)]
    .filter(
      (file) =>
        !file.startsWith(STORE_PREFIX) && !IN_TOOLCHAIN.test(file) && isRunnerLoadedFile(file),
    )
    .sort();
}

/**
 * A toolchain directory however deep (a scratch install's node_modules inside an ignored directory):
 * runners skip those wherever they are, as the listing skips the ones git names on their own.
 */
const IN_TOOLCHAIN = new RegExp(
  `(?:^|/)(?:${BORROWED_DIRECTORIES.map((name) => name.replace('.', '\\.')).join('|')})/`,
);

/**
 * The files under ignored directories (`dir/`, as git names them), toolchains and `.git` left out:
 * git's listing of them, since nothing under an ignored directory can be re-included, but without
 * walking the toolchains (one scratch directory here held 29,000 files: git took 81 ms to list
 * them, and 1,548 packages' own tests were hashed at every fingerprint). A nested repository's
 * files are listed too, which git would leave out.
 */
async function filesUnder(worktree: string, directories: string[]): Promise<string[]> {
  const files: string[] = [];
  const pending = directories.map((directory) => directory.replace(/\/$/, ''));
  const slice = eventLoopSlices();
  while (pending.length > 0) {
    const directory = pending.pop()!;
    for (const entry of entriesIfPresent(path.join(worktree, directory))) {
      const relative = `${directory}/${entry.name}`;
      if (!entry.isDirectory()) files.push(relative);
      else if (entry.name !== '.git' && !IN_TOOLCHAIN.test(`${entry.name}/`))
        pending.push(relative);
    }
    await slice();
  }
  return files;
}

/**
 * Site hooks in the project's own virtualenvs (`.pth` files, sitecustomize.py, usercustomize.py) and the
 * interpreter links: what every Python start-up in a run loads before any test.
 */
export async function siteHookFiles(worktree: string): Promise<string[]> {
  const found: string[] = [];
  for (const venv of await virtualenvs(worktree)) found.push(`${venv}/bin/python`);
  for (const sitePackages of await sitePackagesDirectories(worktree)) {
    for (const name of await readdir(path.join(worktree, sitePackages)).catch(() => []))
      if (SITE_HOOK.test(name)) found.push(`${sitePackages}/${name}`);
  }
  return found.sort();
}

/** The project virtualenvs present: those with an interpreter (link), which runs would start. */
async function virtualenvs(worktree: string): Promise<string[]> {
  const present: string[] = [];
  for (const venv of VIRTUALENVS)
    if (await lstat(path.join(worktree, venv, 'bin/python')).catch(() => undefined))
      present.push(venv);
  return present;
}

async function sitePackagesDirectories(worktree: string): Promise<string[]> {
  const found: string[] = [];
  for (const venv of await virtualenvs(worktree)) {
    for (const version of await readdir(path.join(worktree, venv, 'lib')).catch(() => []))
      found.push(`${venv}/lib/${version}/site-packages`);
  }
  return found;
}

/** A distribution that registers pytest plugins (`[pytest11]` entry points) in a project virtualenv. */
export interface PytestPluginDistribution {
  /** Worktree-relative `<dist>.dist-info/entry_points.txt` (or `.egg-info/`). */
  entry_points: string;
  /** Worktree-relative RECORD beside it, when the installer wrote one. */
  record?: string;
  /**
   * Worktree-relative directory the distribution's metadata sits in: a virtualenv's site-packages, or a
   * worktree directory a `.pth` file puts on `sys.path` (an editable install's `src/`).
   */
  directory: string;
  /** The plugins' modules, as the entry points name them (`package.module`). */
  modules: string[];
}

/**
 * Distributions whose entry points pytest's plugin autoload imports into every run (`[pytest11]`):
 * code that runs before any test, without a site hook. Those in the project's own virtualenvs'
 * site-packages, and in the worktree directories their `.pth` files put on `sys.path`.
 */
export async function pytestPluginDistributions(
  worktree: string,
): Promise<PytestPluginDistribution[]> {
  const found: PytestPluginDistribution[] = [];
  const root = await realpath(worktree);
  const directories = new Set<string>();
  for (const sitePackages of await sitePackagesDirectories(worktree)) {
    directories.add(sitePackages);
    // importlib.metadata finds distributions on every sys.path entry, the .pth-added ones too.
    for (const directory of await pthDirectories(path.join(worktree, sitePackages))) {
      const resolved = await realpath(directory).catch(() => directory);
      if (resolved === root || resolved.startsWith(root + path.sep))
        directories.add(path.relative(root, resolved).split(path.sep).join('/') || '.');
    }
  }
  for (const directory of directories) {
    for (const name of await readdir(path.join(worktree, directory)).catch(() => [])) {
      if (!/\.(?:dist|egg)-info$/.test(name)) continue;
      const entryPoints = `${directory}/${name}/entry_points.txt`;
      const text = await readFile(path.join(worktree, entryPoints), 'utf8').catch(() => '');
      const modules = pytestPluginModules(text);
      if (modules.length === 0) continue;
      const record = `${directory}/${name}/RECORD`;
      found.push({
        entry_points: entryPoints,
        ...((await lstat(path.join(worktree, record)).catch(() => undefined)) ? { record } : {}),
        directory,
        modules,
      });
    }
  }
  return found;
}

/** The RECORD files of every distribution installed in the project's virtualenvs (worktree-relative). */
export async function installedRecords(worktree: string): Promise<string[]> {
  const found: string[] = [];
  for (const sitePackages of await sitePackagesDirectories(worktree)) {
    for (const name of await readdir(path.join(worktree, sitePackages)).catch(() => [])) {
      const record = `${sitePackages}/${name}/RECORD`;
      if (name.endsWith('.dist-info') && (await lstat(path.join(worktree, record)).catch(() => 0)))
        found.push(record);
    }
  }
  return found;
}

/** The absolute directories the `.pth` files of a site-packages directory add to `sys.path`. */
export async function pthDirectories(sitePackages: string): Promise<string[]> {
  const found: string[] = [];
  for (const name of await readdir(sitePackages).catch(() => [] as string[])) {
    if (!name.endsWith('.pth')) continue;
    const text = await readFile(path.join(sitePackages, name), 'utf8').catch(() => '');
    found.push(
      ...text
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => path.isAbsolute(line)),
    );
  }
  return found;
}

/** The modules of an entry_points.txt's `[pytest11]` section (`name = module:attr` lines). */
export function pytestPluginModules(text: string): string[] {
  const modules: string[] = [];
  let inSection = false;
  for (const line of text.split(/\r?\n/)) {
    const section = /^\s*\[([^\]]*)\]/.exec(line);
    if (section) inSection = section[1]!.trim() === 'pytest11';
    else if (inSection && line.includes('=') && !/^\s*[#;]/.test(line)) {
      modules.push(
        line
          .slice(line.indexOf('=') + 1)
          .split(':')[0]!
          .split('[')[0]!
          .trim(),
      );
    }
  }
  return modules.filter(Boolean);
}

/**
 * What every run in the borrowed environment loads before any test: the virtualenvs' site hooks and
 * interpreter links, and the pytest plugin distributions' entry_points.txt and RECORD, each with a
 * fingerprint (a link's resolved target, else a sha256 of the content). Recorded when a task's base is
 * pinned, so a later addition or change is known for what it is.
 */
export async function startUpSurfaces(worktree: string): Promise<Record<string, string>> {
  const files = [
    ...(await siteHookFiles(worktree)),
    ...(await pytestPluginDistributions(worktree)).flatMap((distribution) => [
      distribution.entry_points,
      ...(distribution.record ? [distribution.record] : []),
    ]),
  ];
  const surfaces: Record<string, string> = {};
  for (const file of files.sort()) surfaces[file] = await fingerprint(path.join(worktree, file));
  return surfaces;
}

async function fingerprint(file: string): Promise<string> {
  const info = await lstat(file).catch(() => undefined);
  if (info?.isSymbolicLink()) return `link:${await realpath(file).catch(() => 'dangling')}`;
  const content = await readFile(file).catch(() => undefined);
  return content ? `sha256:${createHash('sha256').update(content).digest('hex')}` : 'unreadable';
}

/** Worktree-relative path of `.git/info/exclude` (in the common git dir for a linked worktree). */
export async function excludeFile(worktree: string): Promise<string> {
  // A repository's own .git directory holds it; only a linked worktree's .git file points elsewhere.
  const entry = await lstat(path.join(worktree, '.git')).catch(() => undefined);
  if (entry?.isDirectory()) return path.join('.git', 'info', 'exclude');
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
