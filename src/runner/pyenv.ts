import { execFile } from 'node:child_process';
import { realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { pathExists } from '../records/files.js';

/** The Python versions pyenv selects for a directory, and their bin directories. */
export interface PyenvChoice {
  versions: string[];
  bins: string[];
}

export interface PyenvLookup {
  /**
   * Where pyenv looks for `.python-version` when `directory` holds none: a snapshot in the temp
   * directory stands for the worktree, whose own (ignored) file or the folders above it choose for it.
   */
  orFrom?: string;
}

const execFileAsync = promisify(execFile);
const LOOKUP_TIMEOUT_MS = 10_000;

/**
 * The pyenv versions a run in `directory` would start, resolved once, when pyenv's shims are the first
 * Python on PATH. A shim is a bash script that runs pyenv again for every start (about 0.35 s of CPU
 * each, and a turn starts Python four times); putting the versions' bin directories first is what
 * `pyenv exec` itself does before it starts the program. Undefined whenever the answer is not a plain
 * installed version (`system`, an unknown name, a failure): the shims then choose as before.
 */
export async function pyenvChoice(
  directory: string,
  env: NodeJS.ProcessEnv,
  lookup: PyenvLookup = {},
): Promise<PyenvChoice | undefined> {
  const root = await shimmedRoot(env.PATH ?? '');
  if (!root) return undefined;
  const own = await pathExists(path.join(directory, '.python-version'));
  let output: string;
  try {
    // Outside the sandbox: this runs the user's own pyenv, not worktree code. pyenv reads the
    // `.python-version` text (refusing a name that leaves its versions/), and its hooks come from
    // the server's environment and pyenv's root, never from the worktree.
    ({ stdout: output } = await execFileAsync(path.join(root, 'libexec', 'pyenv'), ['prefix'], {
      cwd: directory,
      env: {
        ...env,
        PYENV_ROOT: root,
        ...(!own && lookup.orFrom ? { PYENV_DIR: lookup.orFrom } : {}),
      },
      encoding: 'utf8',
      timeout: LOOKUP_TIMEOUT_MS,
    }));
  } catch {
    return undefined;
  }
  const installed = await realpath(path.join(root, 'versions')).catch(() => undefined);
  if (!installed) return undefined;
  const choice: PyenvChoice = { versions: [], bins: [] };
  for (const prefix of output.trim().split(':')) {
    // Only the user's installed versions: a prefix elsewhere (`system`) keeps the shims.
    const resolved = await realpath(prefix).catch(() => undefined);
    if (!resolved?.startsWith(installed + path.sep)) return undefined;
    const bin = path.join(prefix, 'bin');
    if (!(await pathExists(bin))) return undefined;
    choice.versions.push(path.basename(prefix));
    choice.bins.push(bin);
  }
  return choice.bins.length > 0 ? choice : undefined;
}

/** pyenv's root when its shims directory holds the first `python3` (or `python`) on `searchPath`. */
async function shimmedRoot(searchPath: string): Promise<string | undefined> {
  for (const directory of searchPath.split(path.delimiter).filter(path.isAbsolute)) {
    const python = await Promise.all(
      ['python3', 'python'].map((name) => pathExists(path.join(directory, name))),
    );
    if (!python.includes(true)) continue;
    const root = path.dirname(directory);
    const isShims =
      path.basename(directory) === 'shims' &&
      (await pathExists(path.join(root, 'libexec', 'pyenv')));
    return isShims ? root : undefined;
  }
  return undefined;
}

let serverPythonChoice: Promise<string> | undefined;

/**
 * The server's own `python3` (the AST helper runs it in a scratch directory, where the shims choose
 * pyenv's global version): looked up once per process, the shim's start-up being most of a parse.
 */
export function serverPython(): Promise<string> {
  serverPythonChoice ??= pyenvChoice(os.tmpdir(), process.env).then(async (choice) => {
    const python = choice && path.join(choice.bins[0]!, 'python3');
    return python && (await pathExists(python)) ? python : 'python3';
  });
  return serverPythonChoice;
}
