/**
 * Which worktree of the repository each task runs in. The server keeps one history per repository
 * (its git common dir), while each worktree has its own mirror and its own tree: a task's mirror and
 * the freshness of its latest run only mean something in the worktree the task runs in.
 */
import { realpath, stat } from 'node:fs/promises';
import { git } from '../repo/git.js';
import { taskDirectory } from '../records/mirror-paths.js';

export interface RepositoryWorktree {
  path: string;
  /** The branch checked out there, without refs/heads/; null on a detached HEAD. */
  branch: string | null;
  /** The checkout the dashboard was opened on. */
  this_checkout: boolean;
}

/**
 * Every worktree of the repository (`git worktree list`), the opened checkout first. Worktrees whose
 * directory is gone (prunable) are left out: they hold no mirror and no tree.
 */
export async function repositoryWorktrees(root: string): Promise<RepositoryWorktree[]> {
  const listed = parseWorktreeList(await git(root).raw(['worktree', 'list', '--porcelain']));
  const real = await realpath(root).catch(() => root);
  const others: RepositoryWorktree[] = [];
  let opened: RepositoryWorktree = { path: root, branch: null, this_checkout: true };
  for (const entry of listed) {
    if ((await realpath(entry.path).catch(() => entry.path)) === real)
      // Records are read under the path the dashboard was given, as every tool call names it.
      opened = { ...entry, path: root, this_checkout: true };
    else if (await isDirectory(entry.path)) others.push({ ...entry, this_checkout: false });
  }
  return [opened, ...others];
}

/**
 * `git worktree list --porcelain`: blocks of `worktree <path>`, `HEAD …`, `branch refs/heads/…` (or
 * `detached`, or `bare` for a bare repository's own entry, which has no tree).
 */
export function parseWorktreeList(text: string): Omit<RepositoryWorktree, 'this_checkout'>[] {
  const entries: (Omit<RepositoryWorktree, 'this_checkout'> & { bare: boolean })[] = [];
  for (const line of text.split('\n')) {
    const last = entries.at(-1);
    if (line.startsWith('worktree '))
      entries.push({ path: line.slice(9), branch: null, bare: false });
    else if (line.startsWith('branch ') && last)
      last.branch = line.slice(7).replace(/^refs\/heads\//, '');
    else if (line === 'bare' && last) last.bare = true;
  }
  return entries.filter((entry) => !entry.bare).map(({ path, branch }) => ({ path, branch }));
}

/**
 * The worktree a task runs in: the one on its branch `autobuild/<TASK>` (`coachgate worktree start`),
 * else the first one whose mirror holds the task (the opened checkout first: after `worktree finish`
 * the records are copied there), else the opened checkout.
 */
export async function worktreeOfTask(
  worktrees: RepositoryWorktree[],
  taskId: string,
): Promise<RepositoryWorktree> {
  const onBranch = worktrees.find((worktree) => worktree.branch === `autobuild/${taskId}`);
  if (onBranch) return onBranch;
  for (const worktree of worktrees)
    if (await isDirectory(taskDirectory(worktree.path, taskId))) return worktree;
  return worktrees[0]!;
}

export async function isDirectory(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined))?.isDirectory() ?? false;
}
