import { lstat, open, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

export interface PlantedFile {
  /** Worktree-relative. */
  file: string;
  problem: string;
}

const VENVS = ['.venv', 'venv'];
/** .pth files that packaging tools write themselves: their import lines are expected. */
const TOOLING_PTH =
  /^(?:distutils-precedence|_virtualenv|__editable__\..*|_.*_editable.*|coverage.*)\.pth$/;
const SITE_HOOKS = ['sitecustomize.py', 'usercustomize.py'];

/**
 * Things in the borrowed environment that would run the Player's code inside the server's trusted runs:
 * an interpreter that is not a real Python installation, site hooks that execute at start-up, and
 * node_modules/.bin entries that are not the links npm installs. Listed so the refusal names each file.
 */
export async function plantedEnvironment(worktree: string): Promise<PlantedFile[]> {
  const found: PlantedFile[] = [];
  for (const venv of VENVS) {
    const python = path.join(worktree, venv, 'bin', 'python');
    if (!(await lstat(python).catch(() => undefined))) continue;
    const problem = await interpreterProblem(worktree, python);
    if (problem) found.push({ file: `${venv}/bin/python`, problem });
    found.push(...(await siteHooks(worktree, venv)));
  }
  found.push(...(await binShims(worktree)));
  return found;
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

async function siteHooks(worktree: string, venv: string): Promise<PlantedFile[]> {
  const lib = path.join(worktree, venv, 'lib');
  const found: PlantedFile[] = [];
  for (const version of await readdir(lib).catch(() => [] as string[])) {
    const sitePackages = path.join(lib, version, 'site-packages');
    for (const name of await readdir(sitePackages).catch(() => [] as string[])) {
      const file = path.join(venv, 'lib', version, 'site-packages', name);
      if (SITE_HOOKS.includes(name))
        found.push({ file, problem: 'a site hook that runs in every Python start-up' });
      else if (name.endsWith('.pth') && !TOOLING_PTH.test(name)) {
        const content = await readFile(path.join(worktree, file), 'utf8').catch(() => '');
        if (/^\s*import[\s\t]/m.test(content))
          found.push({
            file,
            problem: 'a .pth file whose import line runs in every Python start-up',
          });
      }
    }
  }
  return found;
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
