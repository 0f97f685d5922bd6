import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rename, rm, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDirectory, repositoryStateDirectory } from '../records/state-directory.js';
import { isWithin } from '../sandbox/exposure.js';
import type { TestCommand } from './detect.js';
import type { RunEnvironment } from './environment.js';

/**
 * Python bytecode for the trusted runs of one base, kept by the server. Every run sets
 * PYTHONDONTWRITEBYTECODE, so pytest rewrites the assertions of its autoloaded plugins (all of
 * hypothesis, for one) anew at each start: 1–2 s of CPU, paid by each of a turn's runs.
 *
 * Trust: the one run that writes it is the baseline, which executes the base's code and the
 * borrowed environment and nothing of the Player's; the baseline's result is trusted on the same
 * grounds. Every other run reads it through a read-only bind (bubblewrap only; see
 * src/sandbox/run.ts), so no run of the Player's code can plant bytecode for a later one. Python
 * checks each file against its source's size and time as ever. A project's own virtualenv is left
 * out: the Player can change it between the baseline and a later run (src/evaluation/
 * planted-environment.ts judges it per turn), and bytecode written from a changed one would outlive
 * the change.
 */
export interface BytecodeCache {
  directory: string;
  /** Only for the baseline: the one run of a turn that executes no Player code. */
  writable: boolean;
}

/** One base's cache, for a run of `command` in `cwd` with `environment`. */
export interface BytecodeCacheKey {
  baseCommit: string;
  command: TestCommand;
  environment: RunEnvironment;
  cwd: string;
}

/** Caches kept per repository, most recently used first: one per base and environment. */
const KEPT = 4;
/** A filling run's directory until it ends: readers only ever see a complete cache. */
const FILLING = 'filling-';
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A run with the base's bytecode cache, when it may take one (a Python runner, no virtualenv of the
 * project's): `fills` only for the baseline, which publishes the cache once it ended whole; every
 * other run reads the published cache, or none while there is none yet.
 */
export async function withBytecodeCache<Outcome extends { timed_out: boolean; cancelled: boolean }>(
  worktree: string,
  key: BytecodeCacheKey,
  fills: boolean,
  run: (cache?: BytecodeCache) => Promise<Outcome>,
): Promise<Outcome> {
  const { command, environment } = key;
  const python = command.runner === 'pytest' || command.runner === 'unittest';
  if (!python || environment.interpreter) return run();
  if (!fills) return run(await bytecodeCacheToRead(worktree, key));
  const cache = await bytecodeCacheToFill(worktree);
  let ended = false;
  try {
    const outcome = await run(cache);
    ended = !outcome.timed_out && !outcome.cancelled;
    return outcome;
  } finally {
    await publishBytecodeCache(worktree, key, cache, ended);
  }
}

/** An empty cache for a baseline to fill, beside the published ones. */
async function bytecodeCacheToFill(worktree: string): Promise<BytecodeCache> {
  const root = await cacheRoot(worktree);
  await ensurePrivateDirectory(root);
  return { directory: await mkdtemp(path.join(root, FILLING)), writable: true };
}

/**
 * Publishes a filled cache under its key, or discards it (`filled` false: the run timed out or was
 * stopped, or another run published the key first). A cache is only ever read whole: each pyc file
 * names its source by its path under the cache, so the directory can move once written.
 */
async function publishBytecodeCache(
  worktree: string,
  key: BytecodeCacheKey,
  cache: BytecodeCache,
  filled: boolean,
): Promise<void> {
  const target = await cacheDirectory(worktree, key);
  const published =
    filled &&
    (await rename(cache.directory, target).then(
      () => true,
      () => false,
    ));
  if (!published) await rm(cache.directory, { recursive: true, force: true });
  else await pruneCaches(path.dirname(target));
}

/** The published cache of `key`, read-only; undefined while there is none (runs compile as before). */
async function bytecodeCacheToRead(
  worktree: string,
  key: BytecodeCacheKey,
): Promise<BytecodeCache | undefined> {
  const directory = await cacheDirectory(worktree, key);
  // Marked as used, which also tells whether it is there (pruning keeps the most recently used).
  const now = new Date();
  const present = await utimes(directory, now, now).then(
    () => true,
    () => false,
  );
  return present ? { directory, writable: false } : undefined;
}

async function cacheRoot(worktree: string): Promise<string> {
  return path.join(await repositoryStateDirectory(worktree), 'bytecode');
}

async function cacheDirectory(worktree: string, key: BytecodeCacheKey): Promise<string> {
  // The Python a run starts is the first on PATH: its entries inside the run's directory (a
  // snapshot's, the worktree's) are the same toolchain wherever the tree is.
  const programs = key.environment.env.PATH?.split(path.delimiter).map((entry) =>
    isWithin(entry, key.cwd) ? path.relative(key.cwd, entry) : entry,
  );
  const digest = createHash('sha256')
    .update(JSON.stringify([key.baseCommit, programs]))
    .digest('hex')
    .slice(0, 24);
  return path.join(await cacheRoot(worktree), digest);
}

/**
 * Keeps the KEPT most recently used published caches, and the filling ones younger than a day (a
 * run lasts an hour at most; an older one was left by a server that was killed).
 */
async function pruneCaches(root: string): Promise<void> {
  const dated = await Promise.all(
    (await readdir(root).catch(() => [])).map(async (entry) => {
      const directory = path.join(root, entry);
      const used = await stat(directory).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      return { directory, used, filling: entry.startsWith(FILLING) };
    }),
  );
  const published = dated.filter((entry) => !entry.filling).sort((a, b) => b.used - a.used);
  const abandoned = dated.filter((entry) => entry.filling && Date.now() - entry.used > DAY_MS);
  await Promise.all(
    [...published.slice(KEPT), ...abandoned].map(({ directory }) =>
      rm(directory, { recursive: true, force: true }),
    ),
  );
}
