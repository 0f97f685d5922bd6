import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readlink } from 'node:fs/promises';
import path from 'node:path';
import { importLanguage } from '../scope/import-reach.js';

/** The base's test files in a snapshot, guarded for one run of the Player's code beside them. */
export interface TestFileGuard {
  /** Absolute paths the sandbox makes read-only for the run. */
  readOnly: string[];
  /** After the run: the files it changed or removed, or tried to write and was refused. */
  touched(logPath: string): Promise<string[]>;
}

/**
 * The base's tests are the judge, so product code that writes into them (a golden file rewritten,
 * an expected value edited) is stopped and named: the files are read-only in the run's sandbox, so
 * the write fails there (EROFS), and read by content before and after it, for a run the sandbox
 * could not confine (no bubblewrap) or a file past its binds.
 */
export async function guardTestFiles(
  dir: string,
  files: readonly string[],
): Promise<TestFileGuard> {
  const changed = await watchFiles(dir, files);
  return {
    readOnly: await readOnlyTestPaths(dir, files),
    touched: async (logPath) => {
      const named = new Set([...(await changed()), ...(await blockedWrites(logPath, files))]);
      return files.filter((file) => named.has(file));
    },
  };
}

/**
 * The base's test files, test data and test config in a snapshot, read before a run of the Player's
 * code: after it, the ones the run changed or removed.
 */
async function watchFiles(dir: string, files: readonly string[]): Promise<() => Promise<string[]>> {
  const before = await digests(dir, files);
  return async () => {
    const after = await digests(dir, files);
    return files.filter((file) => before.get(file) !== after.get(file));
  };
}

/**
 * Files digested at once. All at once, a 50,000-file tree's test data held 20,000 descriptors (the
 * opens run ahead of the reads in the thread pool) and 1.2 GB, and the next spawn failed with EMFILE.
 */
const PARALLEL_DIGESTS = 16;

async function digests(dir: string, files: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let start = 0; start < files.length; start += PARALLEL_DIGESTS) {
    const batch = files.slice(start, start + PARALLEL_DIGESTS);
    const batchDigests = await Promise.all(batch.map((file) => digestOf(path.join(dir, file))));
    batch.forEach((file, index) => {
      const digest = batchDigests[index];
      if (digest !== undefined) found.set(file, digest);
    });
  }
  return found;
}

async function digestOf(file: string): Promise<string | undefined> {
  const info = await lstat(file).catch(() => undefined);
  if (!info) return undefined;
  if (info.isSymbolicLink())
    return createHash('sha256')
      .update(`link:${await readlink(file)}`)
      .digest('hex');
  return info.isFile() ? streamedDigest(file) : undefined;
}

/** Streamed, so a 200 MB test data file costs a 64 KiB buffer, not its size. */
async function streamedDigest(file: string): Promise<string | undefined> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  } catch {
    return undefined;
  }
  return hash.digest('hex');
}

/**
 * bubblewrap's start-up grows with the square of its binds (measured here: 50 binds 26 ms, 100
 * 60 ms, 300 260 ms, 1,000 2.5 s). At most READ_ONLY_BINDS files are bound, one by one, so a test
 * can still make new files beside them (a snapshot the Player's new test writes, a scratch output):
 * data and config first, the files a product rewrites to pass; the digests watch every file.
 */
const READ_ONLY_BINDS = 64;

/**
 * What the sandbox makes read-only in a snapshot (absolute paths): the base's test files, data and
 * config, so product code that writes into them fails there and then (EROFS) instead of passing.
 */
async function readOnlyTestPaths(dir: string, files: readonly string[]): Promise<string[]> {
  // Regular files only: a bind follows a link, maybe out of the snapshot (the digests watch links).
  const regular = await Promise.all(
    files.map(async (file) => (await lstat(path.join(dir, file)).catch(() => null))?.isFile()),
  );
  const present = files.filter((_, index) => regular[index]);
  const code = (file: string) => (importLanguage(file) === undefined ? 0 : 1);
  return present
    .sort((a, b) => code(a) - code(b))
    .slice(0, READ_ONLY_BINDS)
    .map((file) => path.join(dir, file));
}

/**
 * The path in a runtime's error for a write a read-only mount (EROFS) or macOS's sandbox (EPERM)
 * refused: after the words (Python's `Read-only file system: '…'`, Node's `EROFS: read-only file
 * system, open '…'`) or before them (Go's `open …: read-only file system`, coreutils' `cannot touch
 * '…': Read-only file system`).
 */
const REFUSAL = [
  'read-only file system',
  'EROFS',
  'operation not permitted',
  'EPERM',
  'permission denied',
  'EACCES',
].join('|');
const REFUSED_PATHS = [
  new RegExp(String.raw`(?:${REFUSAL})[^'"\n]{0,40}(['"])(?<path>[^'"\n]+)\1`, 'gi'),
  new RegExp(String.raw`(?<path>[^\s'"]+)['"]?: (?:${REFUSAL})`, 'gi'),
];
/** Text kept from one piece of the log for the next, so an error split between them is read. */
const OVERLAP_CHARS = 4096;
/** Errors looked at, at most: a run that fails the same write a million times names it early. */
const MAX_ERRORS = 500;

/**
 * The watched files a run tried to write and could not, as the runtime's error names them in the
 * run's log. The log is read in pieces, never whole (it can be hundreds of MB).
 */
async function blockedWrites(logPath: string, files: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  let carried = '';
  const stream = createReadStream(logPath, { encoding: 'utf8', highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      const text = carried + chunk;
      for (const pattern of REFUSED_PATHS)
        for (const match of text.matchAll(pattern)) refused.push(match.groups!.path!);
      if (refused.length > MAX_ERRORS) break;
      carried = text.slice(-OVERLAP_CHARS);
    }
  } catch {
    return []; // no log: nothing ran
  } finally {
    stream.destroy();
  }
  const paths = new Set(refused.map((refusedPath) => path.posix.normalize(refusedPath)));
  return files.filter((file) =>
    [...paths].some((refusedPath) => refusedPath === file || refusedPath.endsWith(`/${file}`)),
  );
}
