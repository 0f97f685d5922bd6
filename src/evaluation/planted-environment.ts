import { lstat, open, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { readPinnedBase, readPinnedNodeModules, type PinnedBase } from '../records/pinned-base.js';
import { fileDigest } from '../repo/file-digest.js';
import {
  pthDirectories,
  pytestPluginDistributions,
  VIRTUALENVS,
  installedRecords,
  siteHookFiles,
  startUpSurfaces,
  type PytestPluginDistribution,
} from '../repo/runner-loaded.js';
import { readManyAtCommit } from '../repo/git.js';
import { declaredPytestPlugins } from '../scope/product-code-rules.js';
import { nodeModulesProblems, type NodeModulesCheck } from './node-modules-integrity.js';
import { EDITED_INSTALL, type PlantedFile } from './planted-file.js';
import { publishedDistributions } from './published-distributions.js';
import type { UnverifiedPackage } from './published-packages.js';
import { STEP, timed, type Steps } from './steps.js';
export { EDITED_INSTALL, type PlantedFile } from './planted-file.js';
export type { UnverifiedPackage } from './published-packages.js';

/** .pth files that packaging tools write themselves: their import lines are expected. */
const TOOLING_PTH =
  /^(?:distutils-precedence|_virtualenv|__editable__\..*|_.*_editable.*|coverage.*)\.pth$/;

const RE_PIN = 'a person accepts the environment as it is now with coachgate task pin-base';

/**
 * Things in the borrowed environment that would run the Player's code inside the server's trusted runs:
 * an interpreter that is not a real Python installation, site hooks that execute at start-up, pytest
 * plugins (entry points pytest's autoload imports), installed files edited in place (a virtualenv's
 * against its RECORD, node_modules against the pin and package-lock.json) and node_modules/.bin entries
 * that do not run a verified package's own command. Listed so the refusal names each file.
 *
 * The files' shapes are always judged: hooks with import lines, plugins whose module loads from the
 * worktree. With `taskId`, so are the start-up surfaces recorded when the task's base was pinned,
 * default-deny: in a virtualenv that existed then, a site hook or pytest plugin added or changed since is
 * planted whatever its shape. What was there at the pin is not trusted for it: the shape checks still
 * apply, since a Player may have touched the environment before the first call pinned the base.
 */
export async function plantedEnvironment(
  worktree: string,
  taskId?: string,
  baseCommit?: string,
  /** The task's pin when the caller has read it already. */
  knownPin?: PinnedBase,
): Promise<PlantedFile[]> {
  return (await environmentCheck(worktree, taskId, baseCommit, knownPin)).planted;
}

/** The borrowed environment judged: what is planted, and what nothing could verify. */
export interface EnvironmentCheck {
  planted: PlantedFile[];
  /** Installed packages not compared with what their registry publishes (none is planted). */
  unverified: UnverifiedPackage[];
}

/** plantedEnvironment, with the packages nothing could verify against their published content. */
export async function environmentCheck(
  worktree: string,
  taskId?: string,
  baseCommit?: string,
  knownPin?: PinnedBase,
): Promise<EnvironmentCheck> {
  const pin =
    knownPin ??
    (taskId ? await readPinnedBase(worktree, taskId).catch(() => undefined) : undefined);
  const [sincePin, ownPlugins] = await Promise.all([
    changesSincePin(worktree, pin?.environment),
    baseCommit ? projectPytestPlugins(worktree, baseCommit) : new Set<string>(),
  ]);
  const found: PlantedFile[] = [];
  for (const file of await siteHookFiles(worktree)) {
    const interpreter = file.endsWith('/bin/python');
    const problem =
      (interpreter
        ? await interpreterProblem(worktree, path.join(worktree, file))
        : await siteHookProblem(worktree, file)) ??
      (sincePin(file) &&
        `${interpreter ? 'the interpreter link' : 'a site hook, run in every Python start-up,'} ${sincePin(file)} (${RE_PIN})`);
    if (problem) found.push({ file, problem });
  }
  for (const distribution of await pytestPluginDistributions(worktree)) {
    const own = distribution.modules.every((module) => ownPlugins.has(module));
    const problem = await pluginProblem(worktree, distribution, sincePin, own);
    if (problem) found.push(problem);
  }
  // Against the published wheel first: that names an edit its RECORD line was rewritten to hide.
  const wheels = await publishedDistributions(worktree);
  found.push(...wheels.filter((item) => !found.some((other) => other.file === item.file)));
  found.push(...(await editedInstalls(worktree, found)));
  const modules = await borrowedNodeModules(worktree, taskId, pin, baseCommit);
  return { planted: [...found, ...modules.planted], unverified: modules.unverified };
}

/** What judges the borrowed environment of one task: its worktree, pinned base and pin. */
export interface EnvironmentScope {
  worktree: string;
  taskId: string;
  base: { commit: string };
  pin?: PinnedBase;
}

/**
 * The environment read once for a whole approval (or integrity check) and handed to everything that
 * judges it: the trusted runs (do runs made earlier still serve?) and the integrity check (site hooks
 * git does not see). A failure is kept for whoever awaits the read, not reported as unhandled.
 */
export function readEnvironmentOnce(
  scope: EnvironmentScope,
  steps?: Steps,
): Promise<EnvironmentCheck> {
  const read = timed(steps, STEP.environment, () =>
    environmentCheck(scope.worktree, scope.taskId, scope.base.commit, scope.pin),
  );
  read.catch(() => undefined);
  return read;
}

/** The planted files of one read, kept like the read for whoever awaits them. */
export function plantedOf(read: Promise<EnvironmentCheck>): Promise<PlantedFile[]> {
  const planted = read.then((check) => check.planted);
  planted.catch(() => undefined);
  return planted;
}

/** node_modules judged by content, against the pin's record of it when there is one. */
async function borrowedNodeModules(
  worktree: string,
  taskId: string | undefined,
  pin: PinnedBase | undefined,
  baseCommit: string | undefined,
): Promise<NodeModulesCheck> {
  let pinned: Record<string, string> | undefined;
  try {
    pinned = pin && taskId ? await readPinnedNodeModules(worktree, taskId, pin) : undefined;
  } catch (error) {
    return {
      planted: [{ file: 'node_modules', problem: (error as Error).message }],
      unverified: [],
    };
  }
  return nodeModulesProblems(worktree, pinned, baseCommit);
}

/**
 * Every installed distribution of the project's virtualenvs verified by content: a module of the test
 * process (pytest itself, an assertion helper, any dependency) edited in place no longer matches the
 * sha256 its RECORD lists. Files already named by another finding are not named twice.
 */
async function editedInstalls(worktree: string, found: PlantedFile[]): Promise<PlantedFile[]> {
  const edited: PlantedFile[] = [];
  for (const record of await installedRecords(worktree)) {
    const directory = path.posix.dirname(path.posix.dirname(record));
    const file = await fileDifferingFromRecord(worktree, { record, directory });
    if (!file || found.some((item) => item.file === file)) continue;
    const name = path.posix.basename(path.posix.dirname(record)).replace(/-[^-]+\.dist-info$/, '');
    edited.push({
      file,
      problem: `${EDITED_INSTALL} ${name} no longer matches the sha256 its RECORD lists (edited in place): code in the test process is not the package that was installed. Restore it (pip install --force-reinstall ${name})`,
    });
  }
  return edited;
}

/**
 * For a file of the start-up surfaces, how it differs from the record made when the task's base was
 * pinned ("added since …", "changed since …"), or undefined. Only the virtualenvs whose interpreter the
 * record holds (those that existed then) are judged; nothing is without a record (older pins).
 */
async function changesSincePin(
  worktree: string,
  pinned: PinnedBase['environment'],
): Promise<(file: string) => string | undefined> {
  if (!pinned) return () => undefined;
  const now = await startUpSurfaces(worktree);
  return (file) => {
    if (!(`${file.split('/')[0]}/bin/python` in pinned) || pinned[file] === now[file])
      return undefined;
    return `${pinned[file] === undefined ? 'added' : 'changed'} since the base was pinned`;
  };
}

/** Why a pytest plugin distribution must not load into the trusted runs, if it must not. */
async function pluginProblem(
  worktree: string,
  distribution: PytestPluginDistribution,
  sincePin: (file: string) => string | undefined,
  /** The project's own plugin, declared by the base: loaded from the trusted snapshot's copy. */
  own: boolean,
): Promise<PlantedFile | undefined> {
  const plugin = `a pytest plugin (${distribution.modules.join(', ')})`;
  const autoload = "pytest's plugin autoload imports it into every run";
  const entryPoints = distribution.entry_points;
  const altered = [entryPoints, distribution.record].find((file) => file && sincePin(file));
  if (altered)
    return { file: altered, problem: `${plugin} ${sincePin(altered)}: ${autoload} (${RE_PIN})` };
  const tampered = await fileDifferingFromRecord(worktree, distribution);
  if (tampered) {
    return {
      file: tampered,
      problem: `${plugin}: this installed file differs from the sha256 its RECORD lists: ${autoload}`,
    };
  }
  // An editable install of the project itself points at the worktree by design; the snapshots put
  // their own copy of the package first on sys.path, so the base's tests load the snapshot's plugin.
  if (own) return undefined;
  if (!VIRTUALENVS.includes(distribution.directory.split('/')[0]!)) {
    return {
      file: entryPoints,
      problem: `${plugin} registered from the worktree, outside the virtualenv, in a directory a .pth file puts on sys.path: ${autoload}`,
    };
  }
  const inWorktree = await pluginModuleInWorktree(worktree, distribution);
  return inWorktree
    ? {
        file: entryPoints,
        problem: `${plugin} whose module loads from the worktree (${inWorktree}), outside the virtualenv: ${autoload}`,
      }
    : undefined;
}

/** The modules the base's manifests register as pytest plugins (`pytest11` entry points). */
async function projectPytestPlugins(worktree: string, baseCommit: string): Promise<Set<string>> {
  // One git process for the three (this runs on every check of the environment).
  const texts = await readManyAtCommit(worktree, baseCommit, [
    'pyproject.toml',
    'setup.cfg',
    'setup.py',
  ]);
  return new Set(
    declaredPytestPlugins({
      pyproject: texts.get('pyproject.toml'),
      setupCfg: texts.get('setup.cfg'),
      setupPy: texts.get('setup.py'),
    }),
  );
}

/**
 * The first file of the distribution, inside its directory, whose content no longer matches the hash
 * its RECORD holds: an installed plugin edited in place (RECORD itself is covered by the pin's record).
 */
async function fileDifferingFromRecord(
  worktree: string,
  distribution: Pick<PytestPluginDistribution, 'record' | 'directory'>,
): Promise<string | undefined> {
  if (!distribution.record) return undefined;
  const record = await readFile(path.join(worktree, distribution.record), 'utf8').catch(() => '');
  // The distribution's console scripts are listed from site-packages (`../../../bin/pytest`): a
  // runner started by name must be the one installed, so those inside the virtualenv count too.
  const virtualenv = `${distribution.directory.split('/')[0]}/`;
  for (const line of record.split('\n')) {
    const match = /^([^,]+),sha256=([A-Za-z0-9_-]+),/.exec(line);
    if (!match) continue;
    const file = path.posix.normalize(`${distribution.directory}/${match[1]}`);
    if (!file.startsWith(virtualenv)) continue;
    const digest = await fileDigest(path.join(worktree, file));
    if (digest !== undefined && digest !== match[2]) return file;
  }
  return undefined;
}

/**
 * The first plugin module not installed in the distribution's site-packages that a Python start-up
 * finds in the worktree instead: at its root, in src/, or under a directory a `.pth` file adds.
 */
async function pluginModuleInWorktree(
  worktree: string,
  distribution: PytestPluginDistribution,
): Promise<string | undefined> {
  const root = await realpath(worktree);
  const sitePackages = path.join(worktree, distribution.directory);
  const places = [root, path.join(root, 'src'), ...(await pthDirectories(sitePackages))];
  for (const module of distribution.modules) {
    const top = module.split('.')[0]!;
    if (await importable(sitePackages, top)) continue;
    for (const place of places) {
      const found = await importable(place, top);
      if (!found) continue;
      const resolved = await realpath(found);
      if (resolved === root || resolved.startsWith(root + path.sep))
        return path.relative(root, resolved);
    }
  }
  return undefined;
}

/** The module or package `name` in `directory`, when there is one. */
async function importable(directory: string, name: string): Promise<string | undefined> {
  for (const candidate of [`${name}.py`, name]) {
    const file = path.join(directory, candidate);
    if (await lstat(file).catch(() => undefined)) return file;
  }
  return undefined;
}

/** A real interpreter resolves outside the worktree to a compiled binary, not a script. */
async function interpreterProblem(worktree: string, python: string): Promise<string | undefined> {
  const resolved = await realpath(python).catch(() => undefined);
  if (!resolved) return 'the interpreter link is broken';
  const root = await realpath(worktree);
  if (resolved.startsWith(root + path.sep))
    return `the interpreter resolves inside the worktree (${path.relative(root, resolved)}), not to a Python installation`;
  const handle = await open(resolved, 'r');
  try {
    const head = Buffer.alloc(2);
    await handle.read(head, 0, 2, 0);
    if (head.toString('latin1') === '#!')
      return `the interpreter is a script (${resolved}), not a Python installation`;
  } finally {
    await handle.close();
  }
  return undefined;
}

async function siteHookProblem(worktree: string, file: string): Promise<string | undefined> {
  const name = path.posix.basename(file);
  if (!name.endsWith('.pth')) return 'a site hook that runs in every Python start-up';
  if (TOOLING_PTH.test(name)) return undefined;
  const content = await readFile(path.join(worktree, file), 'utf8').catch(() => '');
  return /^\s*import[\s\t]/m.test(content)
    ? 'a .pth file whose import line runs in every Python start-up'
    : undefined;
}
