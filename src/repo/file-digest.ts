import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { lstatIfPresent } from './present-entries.js';

/**
 * Digests kept per server process, keyed by path, inode, size, modification and change time, so an
 * installed tree is hashed once per process. A write moves ctime, which no user can set back, with
 * one exception: a write through a shared mapping whose page is already dirty leaves both times
 * as they were (docs/threat-model.md). The tree fingerprint, which ties approvals to trees, keeps
 * no such cache.
 */
const digests = new Map<string, Hashed>();

interface Hashed {
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  digest: string;
}

/** How many files were read and hashed (cache misses) since the process started. */
let hashedFiles = 0;

export function filesHashed(): number {
  return hashedFiles;
}

/**
 * A regular file's sha256 (urlsafe base64, no padding, as a wheel's RECORD writes it); undefined
 * when it is missing or not a regular file. `info` is the file's lstat when the caller has it.
 */
export async function fileDigest(file: string, info?: Stats): Promise<string | undefined> {
  // A synchronous lstat: a cache hit then costs no trip through the thread pool.
  const stats = info ?? lstatIfPresent(file);
  if (!stats?.isFile()) return undefined;
  const known = cachedDigest(file, stats);
  if (known) return known;
  const content = await readFile(file).catch(() => undefined);
  if (!content) return undefined;
  hashedFiles += 1;
  const digest = createHash('sha256').update(content).digest('base64url');
  const { ino, size, mtimeMs, ctimeMs } = stats;
  digests.set(file, { ino, size, mtimeMs, ctimeMs, digest });
  return digest;
}

/** The digest kept for a file whose lstat is `info`, when it has not changed since it was hashed. */
export function cachedDigest(file: string, info: Stats): string | undefined {
  const known = digests.get(file);
  // Compared field by field: no key string built per file on a 30,000-file re-verification.
  return known?.ino === info.ino &&
    known.size === info.size &&
    known.mtimeMs === info.mtimeMs &&
    known.ctimeMs === info.ctimeMs
    ? known.digest
    : undefined;
}
