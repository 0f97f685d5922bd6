import { createHash } from 'node:crypto';
import { constants, realpathSync } from 'node:fs';
import { access, mkdir, realpath, rename } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertTaskId } from '../tasks/task-id.js';
import { git } from '../repo/git.js';

/**
 * The server's own records live outside every worktree, in the state directory: `--state-dir`, else
 * $COACHGATE_STATE_DIR, else $XDG_STATE_HOME/coachgate, else ~/.local/state/coachgate. 0700.
 */
let configuredRoot: string | undefined;

/** Set once by the CLI (`--state-dir`) or a test; overrides the environment. */
export function useStateDirectory(directory: string | undefined): void {
  configuredRoot = directory === undefined ? undefined : path.resolve(directory);
}

export function stateRoot(): string {
  if (configuredRoot) return configuredRoot;
  const fromEnv = process.env.COACHGATE_STATE_DIR;
  if (fromEnv) return path.resolve(fromEnv);
  const xdg = process.env.XDG_STATE_HOME;
  return path.join(
    xdg && path.isAbsolute(xdg) ? xdg : path.join(os.homedir(), '.local', 'state'),
    'coachgate',
  );
}

const repositoryKeys = new Map<string, Promise<string>>();

/**
 * Records are keyed by the repository's git common dir (shared by all its worktrees), hashed from its real
 * path, so every worktree of one repository shares one task history and a fresh clone starts empty.
 */
export function repositoryKey(worktree: string): Promise<string> {
  let key = repositoryKeys.get(worktree);
  if (!key) {
    key = (async () => {
      const common = (await git(worktree).revparse(['--git-common-dir'])).trim();
      const real = await realpath(path.resolve(worktree, common));
      return createHash('sha256').update(real).digest('hex').slice(0, 32);
    })();
    repositoryKeys.set(worktree, key);
    key.catch(() => repositoryKeys.delete(worktree));
  }
  return key;
}

/** `<state>/repos/<key>/`: everything the server keeps for one repository. */
export async function repositoryStateDirectory(worktree: string): Promise<string> {
  return path.join(stateRoot(), 'repos', await repositoryKey(worktree));
}

/** `<state>/repos/<key>/tasks/`: one directory per task the server keeps records for. */
export async function tasksStateDirectory(worktree: string): Promise<string> {
  return path.join(await repositoryStateDirectory(worktree), 'tasks');
}

/** `<state>/repos/<key>/tasks/<TASK>/`: the authoritative copy of one task's records. */
export async function taskStateDirectory(worktree: string, taskId: string): Promise<string> {
  return path.join(await tasksStateDirectory(worktree), assertTaskId(taskId));
}

/**
 * Moves a task's records to `<state>/repos/<key>/replaced/<TASK>-<time>/` (kept for audit, out of
 * every listing); returns where they went.
 */
export async function moveTaskStateAside(worktree: string, taskId: string): Promise<string> {
  const target = path.join(
    await repositoryStateDirectory(worktree),
    'replaced',
    `${assertTaskId(taskId)}-${new Date().toISOString().replace(/[-:.]/g, '')}`,
  );
  await ensurePrivateDirectory(path.dirname(target));
  await rename(await taskStateDirectory(worktree, taskId), target);
  return target;
}

/** Creates the directory (and the state root) private to the user: 0700 at every level coachgate makes. */
export async function ensurePrivateDirectory(directory: string): Promise<void> {
  try {
    await mkdir(stateRoot(), { recursive: true, mode: 0o700 });
    await mkdir(directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    // A recursive mkdir on a read-only disk reports ENOENT; the state root's own errno says why.
    await access(stateRoot(), constants.W_OK);
    throw error;
  }
}

/** The real path of the state root, for containment checks (resolved once it exists). */
export function realStateRoot(): string {
  try {
    return realpathSync(stateRoot());
  } catch {
    return stateRoot();
  }
}
