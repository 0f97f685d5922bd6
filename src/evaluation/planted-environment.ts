import { lstat, open, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { readPinnedBase } from '../records/pinned-base.js';
import {
  pthDirectories,
  pytestPluginDistributions,
  VIRTUALENVS,
  siteHookFiles,
  startUpSurfaces,
  type PytestPluginDistribution,
} from '../repo/runner-loaded.js';

export interface PlantedFile {
  /** Worktree-relative. */
  file: string;
  problem: string;
}

/** .pth files that packaging tools write themselves: their import lines are expected. */
const TOOLING_PTH =
  /^(?:distutils-precedence|_virtualenv|__editable__\..*|_.*_editable.*|coverage.*)\.pth$/;

const SINCE_PIN = 'since the base was pinned';
const RE_PIN = 'a person accepts the environment as it is now with coachgate task pin-base';

/**
 * Things in the borrowed environment that would run the Player's code inside the server's trusted runs:
 * an interpreter that is not a real Python installation, site hooks that execute at start-up, pytest
 * plugins (entry points pytest's autoload imports), and node_modules/.bin entries that are not the links
 * npm installs. Listed so the refusal names each file.
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
): Promise<PlantedFile[]> {
  const pinned = taskId
    ? (await readPinnedBase(worktree, taskId).catch(() => undefined))?.environment
    : undefined;
  const now = pinned ? await startUpSurfaces(worktree) : {};
  /** The pin covers the files of a virtualenv whose interpreter it recorded (one that existed then). */
  const recorded = (file: string) =>
    pinned !== undefined && `${file.split('/')[0]}/bin/python` in pinned;
  const sincePin = (file: string) =>
    pinned![file] === undefined ? `added ${SINCE_PIN}` : `changed ${SINCE_PIN}`;
  const changed = (file: string) => recorded(file) && pinned![file] !== now[file];

  const found: PlantedFile[] = [];
  for (const file of await siteHookFiles(worktree)) {
    const problem = file.endsWith('/bin/python')
      ? ((await interpreterProblem(worktree, path.join(worktree, file))) ??
        (changed(file) ? `the interpreter link ${sincePin(file)} (${RE_PIN})` : undefined))
      : ((await siteHookProblem(worktree, file)) ??
        (changed(file)
          ? `a site hook ${sincePin(file)}: it runs in every Python start-up (${RE_PIN})`
          : undefined));
    if (problem) found.push({ file, problem });
  }
  for (const distribution of await pytestPluginDistributions(worktree)) {
    const files = [distribution.entry_points, distribution.record].filter(
      (file): file is string => file !== undefined,
    );
    const altered = files.find(changed);
    if (altered) {
      found.push({
        file: altered,
        problem: `a pytest plugin (${distribution.modules.join(', ')}) ${sincePin(altered)}: pytest's plugin autoload imports it into every run (${RE_PIN})`,
      });
      continue;
    }
    if (!VIRTUALENVS.includes(distribution.site_packages.split('/')[0]!)) {
      found.push({
        file: distribution.entry_points,
        problem: `a pytest plugin (${distribution.modules.join(', ')}) registered from the worktree, outside the virtualenv, in a directory a .pth file puts on sys.path: pytest's plugin autoload imports it into every run`,
      });
      continue;
    }
    const inWorktree = await pluginModuleInWorktree(worktree, distribution);
    if (inWorktree) {
      found.push({
        file: distribution.entry_points,
        problem: `a pytest plugin whose module loads from the worktree (${inWorktree}), outside the virtualenv: pytest's plugin autoload imports it into every run`,
      });
    }
  }
  found.push(...(await binShims(worktree)));
  return found;
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
  const sitePackages = path.join(worktree, distribution.site_packages);
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

/** npm installs .bin entries as links into node_modules; a regular file or a link elsewhere was planted. */
async function binShims(worktree: string): Promise<PlantedFile[]> {
  const bin = path.join(worktree, 'node_modules', '.bin');
  const modules = path.join(worktree, 'node_modules');
  const found: PlantedFile[] = [];
  for (const name of await readdir(bin).catch(() => [] as string[])) {
    const file = path.join(bin, name);
    const info = await lstat(file);
    const target = info.isSymbolicLink() ? path.resolve(bin, await readlink(file)) : undefined;
    if (!target || !target.startsWith(modules + path.sep) || target.startsWith(bin + path.sep)) {
      found.push({
        file: `node_modules/.bin/${name}`,
        problem: 'not a link npm installed into node_modules',
      });
    }
  }
  return found;
}
