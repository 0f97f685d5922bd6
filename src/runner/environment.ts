import path from 'node:path';
import { pathExists } from '../records/files.js';
import { virtualenvLayout } from './platform.js';
import { pyenvChoice, type PyenvChoice } from './pyenv.js';
import { RUN_COOKIE } from './process-tree.js';

export interface RunEnvironment {
  env: Record<string, string>;
  /** How the command is started: `none` (argv, no shell), `sh -c` / `cmd.exe /c` (config commands), `zsh -lc` etc. */
  shell: string;
  /** The project's own Python, when it has a virtualenv. */
  interpreter?: string;
  path_prefix: string[];
  notes: string[];
}

const VENV_DIRECTORIES = ['.venv', 'venv'];

export interface EnvironmentOptions {
  /** pyenv's choice made elsewhere (null: none); looked up in the directory itself when absent. */
  pyenv?: PyenvChoice | null;
}

/**
 * The Player's environment, not a bare one: the server's environment plus the project's own toolchains
 * (its virtualenv, node_modules/.bin). A Coach that tests in a different environment loops forever.
 */
export async function projectEnvironment(
  worktree: string,
  base: NodeJS.ProcessEnv = process.env,
  options: EnvironmentOptions = {},
): Promise<RunEnvironment> {
  const env: Record<string, string> = Object.fromEntries(
    Object.entries(base).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const pathPrefix: string[] = [];
  const notes: string[] = [];
  let interpreter: string | undefined;
  for (const directory of VENV_DIRECTORIES) {
    const venv = virtualenvLayout(path.join(worktree, directory));
    if (await pathExists(venv.python)) {
      interpreter = venv.python;
      pathPrefix.push(venv.bin);
      env.VIRTUAL_ENV = path.join(worktree, directory);
      notes.push(
        `using the project virtualenv ${directory}/ (pytest runs under ${path.relative(worktree, venv.python)})`,
      );
      break;
    }
  }
  if (!interpreter) {
    const pyenv = options.pyenv !== undefined ? options.pyenv : await pyenvChoice(worktree, env);
    if (pyenv) {
      pathPrefix.push(...pyenv.bins);
      notes.push(
        `using pyenv's Python ${pyenv.versions.join(', ')} (its bin directory first on PATH, as \`pyenv exec\` does)`,
      );
    }
  }
  const nodeBin = path.join(worktree, 'node_modules', '.bin');
  if (await pathExists(nodeBin)) {
    pathPrefix.push(nodeBin);
    notes.push('node_modules/.bin is on PATH');
  }
  env.PATH = [...pathPrefix, env.PATH ?? ''].filter(Boolean).join(path.delimiter);
  // Keep the run from writing caches into the tree, so tree_clean reflects what the tests themselves did.
  env.PYTHONDONTWRITEBYTECODE = '1';
  // Colour variables stay as they are: suites test their own colour handling, and colour codes are
  // stripped from the captured output instead.
  notes.push(
    `coachgate adds PYTHONDONTWRITEBYTECODE=1 and ${RUN_COOKIE} (marks the run's processes for clean-up); NO_COLOR and FORCE_COLOR are left untouched`,
  );
  return {
    env,
    shell: 'none',
    ...(interpreter ? { interpreter } : {}),
    path_prefix: pathPrefix,
    notes,
  };
}
