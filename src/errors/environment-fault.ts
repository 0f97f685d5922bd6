import path from 'node:path';
import { CallerError } from './errors.js';

/** Where coachgate writes, to say which disk or directory an errno is about. */
export interface FaultContext {
  stateRoot: string;
}

interface ErrnoLike {
  code?: unknown;
  path?: unknown;
  syscall?: unknown;
  message?: unknown;
  cause?: unknown;
}

/**
 * A machine condition (disk full, read-only or forbidden directory) as a caller-facing error that says
 * what happened and what to do; undefined for anything else. Follows `cause` chains.
 */
export function environmentFault(error: unknown, context: FaultContext): CallerError | undefined {
  for (let current = error as ErrnoLike | undefined, depth = 0; current && depth < 5; depth++) {
    const fault = describe(current, context);
    if (fault) return fault;
    current = current.cause as ErrnoLike | undefined;
  }
  return undefined;
}

function describe(error: ErrnoLike, { stateRoot }: FaultContext): CallerError | undefined {
  const code = typeof error.code === 'string' ? error.code : undefined;
  const file = typeof error.path === 'string' ? error.path : undefined;
  const inState = file !== undefined && isInside(stateRoot, file);
  const what = file === stateRoot ? 'it' : (file ?? 'a record');
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new CallerError(
      `The disk is full${code === 'EDQUOT' ? ' (quota exceeded)' : ''}: coachgate could not write ${what} (${code}).`,
      `Free space on the disk holding ${inState ? stateRoot : file ? path.dirname(file) : 'the state directory and the worktree'}, then retry the call. Records are written whole or not at all, so nothing is half-written.`,
      { errno: code },
    );
  if (code !== 'EROFS' && code !== 'EACCES' && code !== 'EPERM') return undefined;
  const why =
    code === 'EROFS' ? 'is on a read-only file system' : 'is not writable (permission denied)';
  if (inState)
    return new CallerError(
      `coachgate's state directory ${stateRoot} ${why}: coachgate could not write ${what} (${code}), so nothing was recorded.`,
      `Make ${stateRoot} writable for the user running coachgate, or start coachgate with --state-dir DIR (or COACHGATE_STATE_DIR) on a writable disk (then run coachgate key init there), and retry.`,
      { errno: code },
    );
  return new CallerError(
    `${file ?? 'A file coachgate needs'} ${why} (${code}${typeof error.syscall === 'string' ? `, ${error.syscall}` : ''}).`,
    'Make it writable for the user running coachgate (or remount the disk read-write), then retry.',
    { errno: code },
  );
}

function isInside(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}
