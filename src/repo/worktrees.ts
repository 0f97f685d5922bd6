import { appendFile, mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../core/errors.js';
import { assertTaskId } from '../core/task-id.js';
import { pathExists } from '../records/files.js';
import { STORE_PREFIX } from '../records/mirror-paths.js';
import { git } from './git.js';

/** GuardKit's layout: one worktree per task under the repository, on its own branch. */
export const WORKTREES_DIRECTORY = '.guardkit/worktrees';

export interface TaskWorktree {
  task_id: string;
  path: string;
  branch: string;
  /** The branch the task started from and merges back into. */
  base_branch: string;
}

export function taskWorktree(repository: string, taskId: string, baseBranch: string): TaskWorktree {
  assertTaskId(taskId);
  return {
    task_id: taskId,
    path: path.join(repository, WORKTREES_DIRECTORY, taskId),
    branch: `autobuild/${taskId}`,
    base_branch: baseBranch,
  };
}

/** The branch checked out in `repository`; a detached HEAD cannot receive a merge. */
export async function currentBranch(repository: string): Promise<string> {
  const branch = (await git(repository).raw(['rev-parse', '--abbrev-ref', 'HEAD'])).trim();
  if (branch === 'HEAD')
    throw new CallerError(
      `${repository} has a detached HEAD.`,
      'Check out the branch tasks should merge into (e.g. git switch main).',
    );
  return branch;
}

/** The base branch recorded when the task's worktree was started (git config, so it survives restarts). */
export async function recordedBaseBranch(
  repository: string,
  taskId: string,
): Promise<string | undefined> {
  const value = await git(repository)
    .raw(['config', '--get', `branch.autobuild/${taskId}.coachgateBase`])
    .catch(() => '');
  return value.trim() || undefined;
}

/**
 * Creates `.guardkit/worktrees/<TASK>` on a new branch `autobuild/<TASK>` at `commit`. The directory is
 * excluded locally (.git/info/exclude) so the repository's own status and tree fingerprint ignore it.
 * Starting again returns the existing worktree.
 */
export async function addTaskWorktree(
  repository: string,
  taskId: string,
  commit: string,
  baseBranch: string,
): Promise<TaskWorktree & { created: boolean }> {
  const target = taskWorktree(repository, taskId, baseBranch);
  const repo = git(repository);
  await excludeWorktrees(repository);
  if (await pathExists(target.path))
    return {
      ...target,
      base_branch: (await recordedBaseBranch(repository, taskId)) ?? baseBranch,
      created: false,
    };
  const branchExists = (await repo.raw(['branch', '--list', target.branch])).trim() !== '';
  if (branchExists) {
    throw new CallerError(
      `Branch ${target.branch} already exists but has no worktree at ${WORKTREES_DIRECTORY}/${taskId}.`,
      `Delete or rename the branch (git branch -D ${target.branch}), or check it out there yourself.`,
    );
  }
  await mkdir(path.dirname(target.path), { recursive: true });
  await repo.raw(['worktree', 'add', '-b', target.branch, target.path, commit]);
  await repo.raw(['config', `branch.${target.branch}.coachgateBase`, baseBranch]);
  return { ...target, created: true };
}

/** Commits the Player's work in the worktree on the task branch; coachgate's own records stay out of history. */
export async function commitWorktree(worktree: string, message: string): Promise<string | null> {
  const repo = git(worktree);
  await repo.raw(['add', '-A', '--', '.', `:(exclude)${STORE_PREFIX}`]);
  const staged = (await repo.raw(['diff', '--cached', '--name-only'])).trim();
  if (staged)
    await repo.raw([
      '-c',
      'user.name=coachgate',
      '-c',
      'user.email=coachgate@localhost',
      'commit',
      '-q',
      '--no-verify',
      '-m',
      message,
    ]);
  return staged ? (await repo.revparse(['HEAD'])).trim() : null;
}

export type MergeOutcome =
  { merged: true; commit: string } | { merged: false; conflicts: string[] };

/**
 * Merges the task branch into the base branch checked out in `repository` (--no-ff, so the task stays one
 * unit in history). On a conflict the merge is aborted and the repository is left exactly as it was.
 */
export async function mergeTaskBranch(
  repository: string,
  target: TaskWorktree,
): Promise<MergeOutcome> {
  const repo = git(repository);
  const checkedOut = await currentBranch(repository);
  if (checkedOut !== target.base_branch) {
    throw new CallerError(
      `${repository} has ${checkedOut} checked out, not the base branch ${target.base_branch}.`,
      `Switch to ${target.base_branch} (git switch ${target.base_branch}) and finish again.`,
    );
  }
  const dirty = (await repo.raw(['status', '--porcelain', '--untracked-files=no'])).trim();
  if (dirty)
    throw new CallerError(
      `${repository} has uncommitted changes to tracked files; a merge could mix them in.`,
      'Commit or stash them, then finish again.',
    );
  const message = `Merge ${target.branch}: ${target.task_id} approved by coachgate`;
  // simple-git resolves when git fails without stderr (a conflict reports on stdout): check the index too.
  const failed = await repo
    .raw([
      '-c',
      'user.name=coachgate',
      '-c',
      'user.email=coachgate@localhost',
      'merge',
      '--no-ff',
      '--no-edit',
      '-m',
      message,
      target.branch,
    ])
    .then(
      () => false,
      () => true,
    );
  const conflicts = (await repo.raw(['diff', '--name-only', '--diff-filter=U']))
    .split('\n')
    .filter(Boolean);
  if (failed || conflicts.length > 0) {
    await repo.raw(['merge', '--abort']).catch(() => undefined);
    return { merged: false, conflicts };
  }
  return { merged: true, commit: (await repo.revparse(['HEAD'])).trim() };
}

/** Removes the worktree and its (merged) branch. */
export async function removeTaskWorktree(repository: string, target: TaskWorktree): Promise<void> {
  const repo = git(repository);
  await repo.raw(['worktree', 'remove', '--force', target.path]);
  await repo.raw(['branch', '-d', target.branch]);
  await repo
    .raw(['config', '--unset', `branch.${target.branch}.coachgateBase`])
    .catch(() => undefined);
}

async function excludeWorktrees(repository: string): Promise<void> {
  const commonDir = path.resolve(
    repository,
    (await git(repository).raw(['rev-parse', '--git-common-dir'])).trim(),
  );
  const exclude = path.join(commonDir, 'info', 'exclude');
  const text = await readFile(exclude, 'utf8').catch(() => '');
  if (text.split('\n').includes(`/${WORKTREES_DIRECTORY}/`)) return;
  await mkdir(path.dirname(exclude), { recursive: true });
  await appendFile(
    exclude,
    `${text && !text.endsWith('\n') ? '\n' : ''}/${WORKTREES_DIRECTORY}/\n`,
  );
}
