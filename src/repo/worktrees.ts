import { createHash } from 'node:crypto';
import { appendFile, lstat, mkdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { assertTaskId } from '../tasks/task-id.js';
import { pathExists } from '../records/files.js';
import { isServerWritten, STORE_PREFIX } from '../records/mirror-paths.js';
import { git, gitQuery } from './git.js';

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
  await mkdir(path.dirname(target.path), { recursive: true }).catch(
    (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST' && error.code !== 'ENOTDIR') throw error;
      throw new CallerError(
        `A file is in the way of ${WORKTREES_DIRECTORY}/, where task worktrees go.`,
        "Move it away (it is not coachgate's), then start the task again.",
      );
    },
  );
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

const PARALLEL_READS = 16;

/** A file as the approved commit left it: git's mode and blob id, both null when the task deleted it. */
export interface ApprovedFile {
  path: string;
  mode: string | null;
  blob: string | null;
}

/**
 * The files `commit` changed against `base`, as `commit` has them: what merging the task branch brings
 * into the base branch. coachgate's own records and submodules are left out, as the tree fingerprint
 * leaves them out. `diff-tree --raw` compares stored blob ids and never converts content, so no filter,
 * textconv or external diff the repository configures is run.
 */
export async function approvedFiles(
  repository: string,
  base: string,
  commit: string,
): Promise<ApprovedFile[]> {
  const fields = (
    await gitQuery(repository, [
      'diff-tree',
      '-r',
      '-z',
      '--raw',
      '--no-renames',
      '--no-ext-diff',
      '--no-textconv',
      base,
      commit,
    ])
  ).split('\0');
  const files: ApprovedFile[] = [];
  // -z --raw: ":<old mode> <new mode> <old blob> <new blob> <status>", then the path, NUL-separated.
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const [, oldMode, newMode, , blob, status] = fields[index]!.split(/[: ]/);
    const file = fields[index + 1]!;
    if (isServerWritten(file) || oldMode === '160000' || newMode === '160000') continue;
    const deleted = status === 'D';
    files.push({ path: file, mode: deleted ? null : newMode!, blob: deleted ? null : blob! });
  }
  return files;
}

/**
 * The approved files whose working copy is no longer what the approved commit had: edited, deleted,
 * re-created after a deletion, or with another mode. Hashed here as git would store the file without
 * filters (see changedSince): a clean filter is the repository's program.
 */
export async function changedApprovedFiles(
  worktree: string,
  files: readonly ApprovedFile[],
): Promise<string[]> {
  const changed: string[] = [];
  // In batches, as changedSince reads: a task may have changed thousands of files.
  for (let start = 0; start < files.length; start += PARALLEL_READS) {
    const batch = files.slice(start, start + PARALLEL_READS);
    const current = await Promise.all(
      batch.map((file) => workingBlob(path.join(worktree, file.path))),
    );
    batch.forEach((file, index) => {
      const now = current[index];
      const approved = file.blob === null ? undefined : `${file.mode} ${file.blob}`;
      if (now !== approved) changed.push(file.path);
    });
  }
  return changed;
}

async function workingBlob(file: string): Promise<string | undefined> {
  const info = await lstat(file).catch(() => undefined);
  if (info?.isSymbolicLink()) return `120000 ${blobId(Buffer.from(await readlink(file)))}`;
  if (!info?.isFile()) return undefined;
  return `${info.mode & 0o111 ? '100755' : '100644'} ${blobId(await readFile(file))}`;
}

function blobId(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Whether `ancestor` is `commit` or in its history; false when either is unknown (a shallow clone). */
export async function isAncestor(
  repository: string,
  ancestor: string,
  commit: string,
): Promise<boolean> {
  return gitQuery(repository, ['merge-base', '--is-ancestor', ancestor, commit]).then(
    () => true,
    () => false,
  );
}

/** The parents of `commit`, first parent first. */
export async function commitParents(repository: string, commit: string): Promise<string[]> {
  const line = await gitQuery(repository, ['rev-list', '--parents', '-n', '1', commit, '--']);
  return line.trim().split(' ').slice(1);
}
