import { createHash } from 'node:crypto';
import {
  mkdir,
  mkdtemp,
  readdir,
  realpath,
  rename,
  rm,
  stat,
  symlink,
  utimes,
} from 'node:fs/promises';
import path from 'node:path';
import { ensurePrivateDirectory, repositoryStateDirectory } from '../records/state-directory.js';
import { isWithin } from '../repo/worktree-paths.js';
import { compileCheckedBytecode, sourcesNamedIn } from './checked-bytecode.js';
import type { BytecodeCache } from './bytecode-cache-types.js';
import type { TestCommand } from './detect.js';
import type { RunEnvironment } from './environment.js';

/**
 * Python bytecode for the trusted runs of one base, kept by the server. Every run sets
 * PYTHONDONTWRITEBYTECODE, so pytest rewrites the assertions of its autoloaded plugins (all of
 * hypothesis, for one) and of every test module anew at each start: 1–2 s of CPU, paid by each of
 * a turn's runs.
 *
 * Trust: the one run that writes it is the baseline, which executes the base's code and the
 * borrowed environment and nothing of the Player's; the baseline's result is trusted on the same
 * grounds. Every other run reads it through a read-only bind (bubblewrap only; see
 * src/sandbox/run.ts), so no run of the Player's code can plant bytecode for a later one. Python
 * checks each file against its source's size and time as ever.
 *
 * A project with its own virtualenv is the exception: the Player can change the virtualenv before
 * the baseline or between runs (src/evaluation/planted-environment.ts judges it per turn), so what
 * its baseline wrote is never kept, only the names of the modules it imported. coachgate compiles
 * those into checked-hash bytecode itself (src/runner/checked-bytecode.ts), which Python takes only
 * while a source's content is the one compiled. The Player's run there reads no cache.
 *
 * A snapshot's run with no published cache to read (the first turn's, before the baseline ended) is
 * given an empty read-only prefix instead: it reads no bytecode at all, so none that a process of
 * the run wrote beside a base file, whatever file time it carries.
 *
 * A published cache holds two trees: `prefix/`, the bytecode of everything outside the baseline's
 * directory (the interpreter's, the installed packages'), under their absolute paths as Python
 * names them; and `tree/`, the bytecode of the base's own files, relative to the tree. Each
 * snapshot of the base is a directory of its own, so a snapshot's run reads through a view of the
 * cache that names `tree/` under the snapshot's path: its base files carry the time the baseline's
 * did and match their bytecode; the files laid from the Player carry another and never do
 * (src/evaluation/snapshot.ts). The Player's run in the worktree reads `prefix/` alone.
 */

/**
 * How a run uses its base's cache: the baseline fills it; a run in a snapshot of the base reads
 * the base tree's bytecode too; the Player's run in the worktree reads the environment's alone.
 */
export type BytecodeCacheUse = 'fill' | 'snapshot' | 'worktree';

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
/** A snapshot run's view of a published cache, removed when the run ends. */
const VIEW = 'view-';
/** The two trees of a published cache (see BytecodeCache). */
const PREFIX = 'prefix';
const TREE = 'tree';
const DAY_MS = 24 * 60 * 60 * 1000;
/** In every key: a cache of an earlier layout (one tree, no `prefix/`) is never read. */
const LAYOUT = 'prefix+tree';
/** A virtualenv project's cache is another kind (checked-hash, compiled by coachgate): another key. */
const CHECKED = 'checked-hash';

/**
 * A run with the base's bytecode cache, when it may take one (a Python runner; not the Player's run
 * in a project with its own virtualenv): the baseline (`fill`) writes one and publishes it once it
 * ended whole; every other run reads the published cache, or none while there is none yet.
 */
export async function withBytecodeCache<Outcome extends { timed_out: boolean; cancelled: boolean }>(
  worktree: string,
  key: BytecodeCacheKey,
  use: BytecodeCacheUse,
  run: (cache?: BytecodeCache) => Promise<Outcome>,
): Promise<Outcome> {
  const { command, environment } = key;
  const python = command.runner === 'pytest' || command.runner === 'unittest';
  if (!python) return run();
  if (environment.interpreter && use === 'worktree') return run();
  if (use !== 'fill') return readingBytecodeCache(worktree, key, use, run);
  const filling = await fillingDirectory(worktree);
  let ended = false;
  try {
    const prefix = path.join(filling, PREFIX);
    const outcome = await run({ directory: prefix, writable: true, revealed: [filling] });
    ended = !outcome.timed_out && !outcome.cancelled;
    return outcome;
  } finally {
    await publishBytecodeCache(worktree, key, filling, ended);
  }
}

/** An empty cache for a baseline to fill, beside the published ones. */
async function fillingDirectory(worktree: string): Promise<string> {
  const root = await cacheRoot(worktree);
  await ensurePrivateDirectory(root);
  const filling = await mkdtemp(path.join(root, FILLING));
  await mkdir(path.join(filling, PREFIX));
  return filling;
}

/**
 * Publishes a filled cache under its key, or discards it (`ended` false: the run timed out or was
 * stopped; nothing compiled for a virtualenv project; or another run published the key first). The bytecode of the baseline's own tree moves
 * to `tree/`. A cache is only ever read whole: each pyc file names its source by its path under
 * the cache, so the directory can move once written.
 */
async function publishBytecodeCache(
  worktree: string,
  key: BytecodeCacheKey,
  filling: string,
  ended: boolean,
): Promise<void> {
  const { interpreter } = key.environment;
  const filled =
    ended && (interpreter === undefined || (await recompiled(filling, key.cwd, interpreter)));
  // None when the run imported nothing of its tree.
  await realpath(key.cwd)
    .then((tree) => rename(path.join(filling, PREFIX, tree), path.join(filling, TREE)))
    .catch(() => undefined);
  const target = await cacheDirectory(worktree, key);
  const published =
    filled &&
    (await rename(filling, target).then(
      () => true,
      () => false,
    ));
  if (!published) await rm(filling, { recursive: true, force: true });
  else await pruneCaches(path.dirname(target));
}

/**
 * Replaces what a virtualenv project's baseline wrote under `filling` by coachgate's own checked-hash
 * compilation of the sources it names; false when there is nothing to keep.
 */
async function recompiled(filling: string, cwd: string, python: string): Promise<boolean> {
  const written = path.join(filling, PREFIX);
  const sources = await sourcesNamedIn(written);
  const compiled = path.join(filling, CHECKED);
  await mkdir(compiled);
  const kept = await compileCheckedBytecode(sources, compiled, cwd, python).catch(() => false);
  await rm(written, { recursive: true, force: true });
  if (kept) await rename(compiled, written);
  return kept;
}

/** The run with the published cache of `key`, read-only; without one while there is none. */
async function readingBytecodeCache<Outcome>(
  worktree: string,
  key: BytecodeCacheKey,
  use: BytecodeCacheUse,
  run: (cache?: BytecodeCache) => Promise<Outcome>,
): Promise<Outcome> {
  const published = await cacheDirectory(worktree, key);
  // Marked as used, which also tells whether it is there (pruning keeps the most recently used).
  const now = new Date();
  const present = await utimes(published, now, now).then(
    () => true,
    () => false,
  );
  if (!present) return use === 'snapshot' ? withEmptyCache(worktree, run) : run();
  const prefix = path.join(published, PREFIX);
  // A view that cannot be made (a full disk) costs the tree's bytecode, never the run.
  const view =
    use === 'snapshot' ? await treeView(published, key.cwd).catch(() => undefined) : undefined;
  if (!view) return run({ directory: prefix, writable: false, revealed: [published] });
  try {
    return await run({ directory: view, writable: false, revealed: [published, view] });
  } finally {
    await rm(view, { recursive: true, force: true });
  }
}

/**
 * A snapshot run with no cache to read (none published yet, or a project's own virtualenv): an empty
 * read-only prefix, so Python and pytest read no bytecode at all (none beside a source, where a
 * process of the run could have written it, nor a virtualenv's) and compile every module they
 * import from its source.
 */
async function withEmptyCache<Outcome>(
  worktree: string,
  run: (cache?: BytecodeCache) => Promise<Outcome>,
): Promise<Outcome> {
  const root = await cacheRoot(worktree);
  await ensurePrivateDirectory(root);
  const empty = await mkdtemp(path.join(root, VIEW));
  try {
    return await run({ directory: empty, writable: false, revealed: [empty] });
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
}

/**
 * A snapshot run's prefix: the published `prefix/` with `tree/` in place of the run's own
 * directory. Along the path to that directory each level is a directory of links to the cache's
 * entries there; everything else is a link into the cache, so nothing is copied.
 */
async function treeView(published: string, cwd: string): Promise<string> {
  const view = await mkdtemp(path.join(path.dirname(published), VIEW));
  try {
    const parts = (await realpath(cwd)).split(path.sep).filter(Boolean);
    let [into, from] = [view, path.join(published, PREFIX)];
    for (const [index, part] of parts.entries()) {
      const entries = await readdir(from).catch(() => [] as string[]);
      for (const entry of entries.filter((name) => name !== part))
        await symlink(path.join(from, entry), path.join(into, entry));
      const next = path.join(into, part);
      if (index === parts.length - 1) await symlink(path.join(published, TREE), next);
      else await mkdir(next);
      [into, from] = [next, path.join(from, part)];
    }
    return view;
  } catch (error) {
    await rm(view, { recursive: true, force: true });
    throw error;
  }
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
    .update(
      JSON.stringify([
        LAYOUT,
        key.environment.interpreter ? CHECKED : '',
        key.baseCommit,
        programs,
      ]),
    )
    .digest('hex')
    .slice(0, 24);
  return path.join(await cacheRoot(worktree), digest);
}

/**
 * Keeps the KEPT most recently used published caches, and the filling ones and views younger than
 * a day (a run lasts an hour at most; an older one was left by a server that was killed).
 */
async function pruneCaches(root: string): Promise<void> {
  const dated = await Promise.all(
    (await readdir(root).catch(() => [])).map(async (entry) => {
      const directory = path.join(root, entry);
      const used = await stat(directory).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      return { directory, used, filling: entry.startsWith(FILLING) || entry.startsWith(VIEW) };
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
