import type { BigIntStats } from 'node:fs';

/**
 * Content hashes the server computed, kept per path with the identity of the file it read: device,
 * inode, size, modification and change time in nanoseconds. A tree fingerprint is taken several
 * times a turn; on a 50,000-file tree each one read every file again. A file whose identity is
 * unchanged has the content it had: any write sets its change time to the clock's, and no process
 * can set that time back (its modification time, it can).
 *
 * A write within the clock's tick of the read can leave the change time as it was, so a hash is
 * kept only for a file whose change time is well before the read began.
 */
const SETTLED_NS = 2_000_000_000n;
/** Enough for a large monorepo's worktree and snapshots; past it the map starts again. */
const KEPT = 200_000;

/** What a hash is of: a file's sha256, or its blob id as git would store it unfiltered. */
export type HashKind = 'sha256' | 'git-blob';

/** Per path, one entry for both kinds: a 50,000-file tree is 50,000 entries, not 100,000. */
const kept = new Map<string, { identity: string } & Partial<Record<HashKind, string>>>();

function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/** The hash kept for `file` when `info` (its lstat now) is the identity it was read with. */
export function knownHash(kind: HashKind, file: string, info: BigIntStats): string | undefined {
  const entry = kept.get(file);
  return entry?.identity === identityOf(info) ? entry[kind] : undefined;
}

/** The clock as file change times read it, for `keepHash`: taken before the file is opened. */
export function readStart(): bigint {
  return BigInt(Date.now()) * 1_000_000n;
}

/** Keeps `hash` of `file`, read after `started` through a descriptor whose fstat was `info`. */
export function keepHash(
  kind: HashKind,
  file: string,
  info: BigIntStats,
  hash: string,
  started: bigint,
): void {
  if (started - info.ctimeNs < SETTLED_NS) return;
  const identity = identityOf(info);
  const entry = kept.get(file);
  if (entry?.identity === identity) entry[kind] = hash;
  else {
    if (kept.size >= KEPT) kept.clear();
    kept.set(file, { identity, [kind]: hash });
  }
}
