import { realpath } from 'node:fs/promises';
import { CallerError } from '../errors/errors.js';
import { MAX_TEXT_FILE_BYTES, readRegularFile } from './read-text.js';
import { isInside, worktreeRelative } from './workspace.js';

/** A worktree file whose links lead outside the worktree: refused, never opened. */
export class OutsideWorktreeError extends CallerError {
  constructor(worktree: string, file: string) {
    super(
      `Refusing to read ${worktreeRelative(worktree, file)}: it is a link (or lies under one) that leads outside the worktree.`,
      'Replace the link with a real file inside the worktree; coachgate reads the files the Player can write only inside it.',
    );
    this.name = 'OutsideWorktreeError';
  }
}

/**
 * The real path of `file`, a path in `worktree` the Player can write, after checking that resolving
 * its links keeps it inside the worktree's real path (the rule record writes follow). Rejects with
 * ENOENT for a missing file, OutsideWorktreeError for an escape.
 */
export async function realPathInWorktree(worktree: string, file: string): Promise<string> {
  const [root, real] = await Promise.all([realpath(worktree), realpath(file)]);
  if (!isInside(root, real)) throw new OutsideWorktreeError(worktree, file);
  return real;
}

/** Reads a file the Player can write: links resolved, a target outside the worktree refused unread. */
export async function readWorktreeFile(
  worktree: string,
  file: string,
  maxBytes = MAX_TEXT_FILE_BYTES,
): Promise<string> {
  return readRegularFile(await realPathInWorktree(worktree, file), maxBytes);
}
