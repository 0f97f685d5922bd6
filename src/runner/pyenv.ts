import { execFile } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
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
  const from = own ? directory : (lookup.orFrom ?? directory);
  // `pyenv prefix` is a chain of bash scripts (30-70 ms a run): its answer is kept while what it
  // reads stays as it was. It reads from `from` alone, so a trusted run's snapshot (a new directory
  // each time, looking from its worktree) shares the worktree's answer.
  const key = JSON.stringify([root, from, env.PYENV_VERSION ?? null]);
  const stamp = await versionStamp(root, from);
  const kept = choices.get(key);
  if (kept?.stamp === stamp) return kept.choice;
  // A look-up cut short (a time-out on a busy machine) is not kept.
  const choice = lookUp(root, directory, env, own ? {} : lookup).catch(() => {
    if (choices.get(key)?.choice === choice) choices.delete(key);
    return undefined;
  });
  if (choices.size >= CHOICES_KEPT) choices.delete(choices.keys().next().value!);
  choices.set(key, { stamp, choice });
  return choice;
}

/** pyenv's answers by directory, with the stamp of the files it read for each; oldest dropped. */
const choices = new Map<string, { stamp: string; choice: Promise<PyenvChoice | undefined> }>();
const CHOICES_KEPT = 256;

/**
 * What `pyenv prefix` reads besides PYENV_VERSION: the `.python-version` files from `from` up to
 * the root of the file system, pyenv's global `version` file and its `versions` directory (a
 * version installed or removed changes its modification time).
 */
async function versionStamp(root: string, from: string): Promise<string> {
  const files = [path.join(root, 'version'), path.join(root, 'versions')];
  for (let directory = from; ; directory = path.dirname(directory)) {
    files.push(path.join(directory, '.python-version'));
    if (path.dirname(directory) === directory) break;
  }
  const stamps = await Promise.all(
    files.map((file) =>
      stat(file).then(
        (info) => `${info.mtimeMs}:${info.size}:${info.ino}`,
        () => '-',
      ),
    ),
  );
  return stamps.join('|');
}

async function lookUp(
  root: string,
  directory: string,
  env: NodeJS.ProcessEnv,
  lookup: PyenvLookup,
): Promise<PyenvChoice | undefined> {
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
        ...(lookup.orFrom ? { PYENV_DIR: lookup.orFrom } : {}),
      },
      encoding: 'utf8',
      timeout: LOOKUP_TIMEOUT_MS,
    }));
  } catch (error) {
    // pyenv's own "no such version" is an answer; a look-up it did not finish is not.
    if ((error as { killed?: boolean }).killed) throw error;
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
