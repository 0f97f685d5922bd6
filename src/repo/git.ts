import { realpath } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { SimpleGit } from 'simple-git';
import { CallerError } from '../core/errors.js';
import { quotePrefix } from '../core/quote.js';

export interface BaseCommit {
  commit: string;
  /** How the base was chosen, for reports: `--base main`, `merge-base HEAD main`, `HEAD`. */
  source: string;
}

const DEFAULT_BRANCHES = ['main', 'master', 'origin/main', 'origin/master'];

/** simple-git is required on first use (its CommonJS build loads synchronously), not at start-up. */
function loadSimpleGit(): typeof import('simple-git').simpleGit {
  return (createRequire(import.meta.url)('simple-git') as typeof import('simple-git')).simpleGit;
}

export function git(worktree: string): SimpleGit {
  // Inherit the environment as is: simple-git refuses an explicit env carrying EDITOR/PAGER-like variables,
  // and coachgate only runs local, non-interactive git commands.
  return loadSimpleGit()({ baseDir: worktree, config: ['core.quotepath=false'] });
}

/** Fails with a clear message unless `worktree` is the top of a git work tree with at least one commit. */
export async function assertRepository(worktree: string): Promise<void> {
  const repo = git(worktree);
  let top: string;
  try {
    top = (await repo.revparse(['--show-toplevel'])).trim();
  } catch {
    throw new CallerError(`${worktree} is not a git repository.`, 'Pass the root of a git repository or git worktree (coachgate reads trusted files from its base commit).');
  }
  if (!(await sameDirectory(top, worktree))) {
    throw new CallerError(`${worktree} is inside the git repository ${top}, not its root.`, `Pass the repository root: ${top}.`);
  }
  if (!(await commitOf(repo, 'HEAD'))) {
    throw new CallerError(`${worktree} has no commits yet.`, 'Commit the task files and configuration first; the first commit is the trusted base.');
  }
}

/** The trusted base: explicit ref, else merge-base of HEAD with the default branch, else HEAD. */
export async function resolveBase(worktree: string, ref?: string): Promise<BaseCommit> {
  const repo = git(worktree);
  if (ref) {
    if (ref.startsWith('-')) throw new CallerError(`Base ref ${quotePrefix(ref)} looks like an option.`, 'Pass a branch, tag or commit name.');
    const commit = await commitOf(repo, ref);
    if (!commit) throw new CallerError(`Base ref ${quotePrefix(ref)} does not name a commit in ${worktree}.`, 'Pass a branch, tag or commit that exists (e.g. main).');
    return { commit, source: `ref ${ref}` };
  }
  for (const branch of DEFAULT_BRANCHES) {
    if (!(await commitOf(repo, branch))) continue;
    try {
      const commit = (await repo.raw(['merge-base', 'HEAD', branch])).trim();
      if (commit) return { commit, source: `merge-base HEAD ${branch}` };
    } catch {
      // Unrelated histories: try the next candidate, then fall back to HEAD.
    }
  }
  return { commit: (await commitOf(repo, 'HEAD'))!, source: 'HEAD' };
}

/** The file's content at `commit`, or undefined when it does not exist there. */
export async function readAtCommit(worktree: string, commit: string, relativePath: string): Promise<string | undefined> {
  try {
    return await git(worktree).show([`${commit}:${relativePath}`]);
  } catch {
    return undefined;
  }
}

/** Files (worktree-relative) present at `commit` under the given directories. */
export async function listAtCommit(worktree: string, commit: string, directories: string[]): Promise<string[]> {
  const output = await git(worktree).raw(['ls-tree', '-r', '-z', '--name-only', commit, '--', ...directories]);
  return output.split('\0').filter(Boolean);
}

/** Tracked and untracked (not ignored) files in the working tree, worktree-relative. */
export async function listWorkingFiles(worktree: string): Promise<string[]> {
  const output = await git(worktree).raw(['ls-files', '-z', '--cached', '--others', '--exclude-standard']);
  return [...new Set(output.split('\0').filter(Boolean))].sort();
}

/** Paths that differ between `commit` and the working tree, committed, staged, unstaged or untracked. */
export async function changedSince(worktree: string, commit: string): Promise<string[]> {
  const repo = git(worktree);
  const tracked = await repo.raw(['diff', '-z', '--name-only', '--no-renames', commit, '--']);
  const untracked = await repo.raw(['ls-files', '-z', '--others', '--exclude-standard']);
  return [...new Set([...tracked.split('\0'), ...untracked.split('\0')].filter(Boolean))].sort();
}

async function commitOf(repo: SimpleGit, ref: string): Promise<string | undefined> {
  try {
    return (await repo.revparse(['--verify', '--quiet', `${ref}^{commit}`])).trim() || undefined;
  } catch {
    return undefined;
  }
}

async function sameDirectory(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([realpath(a).catch(() => a), realpath(b).catch(() => b)]);
  return ra === rb;
}
