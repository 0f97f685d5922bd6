import { lstat, open, readdir, readFile, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { siteHookFiles } from '../repo/runner-loaded.js';

export interface PlantedFile {
  /** Worktree-relative. */
  file: string;
  problem: string;
}

/** .pth files that packaging tools write themselves: their import lines are expected. */
const TOOLING_PTH =
  /^(?:distutils-precedence|_virtualenv|__editable__\..*|_.*_editable.*|coverage.*)\.pth$/;

/**
 * Things in the borrowed environment that would run the Player's code inside the server's trusted runs:
 * an interpreter that is not a real Python installation, site hooks that execute at start-up, and
 * node_modules/.bin entries that are not the links npm installs. Listed so the refusal names each file.
 */
export async function plantedEnvironment(worktree: string): Promise<PlantedFile[]> {
  const found: PlantedFile[] = [];
  for (const file of await siteHookFiles(worktree)) {
    const problem = file.endsWith('/bin/python')
      ? await interpreterProblem(worktree, path.join(worktree, file))
      : await siteHookProblem(worktree, file);
    if (problem) found.push({ file, problem });
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
