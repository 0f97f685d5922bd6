import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { quotePrefix } from '../errors/quote.js';

/** Supplies the directories the caller may work in (`--root` flags, the client's MCP roots, or the cwd). */
export type RootsProvider = () => Promise<string[]>;

/** Resolves and guards `worktree` arguments against the allowed roots. */
export class Workspace {
  constructor(private readonly roots: RootsProvider) {}

  async allowedRoots(): Promise<string[]> {
    const roots = await this.roots();
    const real = await Promise.all(roots.map((root) => realpath(root).catch(() => undefined)));
    return real.filter((root): root is string => root !== undefined);
  }

  /** Absolute, or relative to the first root; must be an existing directory inside a root after symlinks. */
  async resolveWorktree(worktree: string): Promise<string> {
    const roots = await this.allowedRoots();
    if (roots.length === 0)
      throw new CallerError(
        'No allowed root directory exists.',
        'Start coachgate with --root DIR pointing at an existing directory.',
      );
    if (worktree.trim() === '')
      throw new CallerError(
        'worktree is empty.',
        'Pass the path of the repository or git worktree to check.',
      );
    if (worktree.includes('\0'))
      throw new CallerError(
        `worktree ${quotePrefix(worktree.replaceAll('\0', '\\0'))} contains a NUL byte, which no path can hold.`,
        'Pass the path of the repository or git worktree to check.',
      );
    const lexical = path.resolve(roots[0]!, worktree);
    let real: string;
    try {
      real = await realpath(lexical);
    } catch {
      throw new CallerError(
        `worktree ${quotePrefix(worktree)} does not exist (resolved to ${quotePrefix(lexical)}).`,
        `Pass an existing directory inside ${roots.join(', ')}.`,
      );
    }
    if (!(await stat(real)).isDirectory())
      throw new CallerError(`worktree ${quotePrefix(worktree)} is not a directory.`);
    if (!roots.some((root) => isInside(root, real))) {
      const escaped = roots.some((root) => isInside(root, lexical));
      throw new CallerError(
        escaped
          ? `worktree ${worktree} is a symlink that leads outside the allowed roots (to ${real}).`
          : `worktree ${worktree} is outside the allowed roots.`,
        `Allowed roots: ${roots.join(', ')}. Start coachgate with --root for another directory.`,
      );
    }
    return real;
  }
}

/** `file` as a worktree-relative POSIX path, the spelling every record and result uses. */
export function worktreeRelative(worktree: string, file: string): string {
  return path.relative(worktree, file).split(path.sep).join('/');
}

/** Whether `child` is `parent` or lies under it (paths as given: resolve links first). */
export function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/**
 * Resolves a worktree-relative file for reading. Refuses `..` escapes and symlinks that lead out of the
 * worktree; returns undefined when the file does not exist.
 */
export async function resolveFileInWorktree(
  worktree: string,
  relative: string,
): Promise<string | undefined> {
  const lexical = path.resolve(worktree, relative);
  if (!isInside(worktree, lexical))
    throw new CallerError(
      `${relative} is outside the worktree.`,
      'Use a path inside the worktree.',
    );
  let real: string;
  try {
    real = await realpath(lexical);
  } catch {
    return undefined;
  }
  if (!isInside(worktree, real))
    throw new CallerError(`${relative} is a symlink that leads outside the worktree.`);
  return real;
}
