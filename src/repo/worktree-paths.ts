import path from 'node:path';

export type RelativePath = { ok: true; path: string } | { ok: false; problem: string };

/**
 * Turns a path a Player wrote (absolute, `./x`, `a/../b`, Windows separators) into one worktree-relative
 * POSIX spelling, so an absolute and a relative spelling of the same file are the same file.
 */
export function toWorktreeRelative(worktree: string, claimed: string): RelativePath {
  const trimmed = claimed.trim().replace(/\\/g, '/');
  if (trimmed === '') return { ok: false, problem: 'empty path' };
  const root = worktree.replace(/\\/g, '/');
  const absolute = path.posix.isAbsolute(trimmed)
    ? path.posix.normalize(trimmed)
    : path.posix.join(root, trimmed);
  const relative = path.posix.relative(root, absolute);
  if (
    relative === '' ||
    relative.startsWith('..') ||
    relative === '..' ||
    path.posix.isAbsolute(relative)
  ) {
    return { ok: false, problem: `${claimed} is outside the worktree` };
  }
  return { ok: true, path: relative };
}

/** Normalises and de-duplicates a list of claimed paths, keeping first-seen order. */
export function normalisePathList(
  worktree: string,
  claimed: readonly string[],
): { paths: string[]; problems: string[] } {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const entry of claimed) {
    const result = toWorktreeRelative(worktree, entry);
    if (result.ok) seen.add(result.path);
    else problems.push(result.problem);
  }
  return { paths: [...seen], problems };
}

/** Whether `child` is `parent` or lies under it (both absolute, lexically). */
export function isWithin(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}
