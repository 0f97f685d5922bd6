import { existsSync } from 'node:fs';
import { cp, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ensurePrivateDirectory, repositoryStateDirectory } from '../records/state-directory.js';
import { childRun } from '../repo/child-output.js';
import type { TestCommand } from './detect.js';

/** Go trims what it has not used for five days; the kept cache starts afresh as often. */
const KEPT_DAYS = 5;
const DAY_MS = 24 * 60 * 60 * 1000;
/** Written when the kept cache is made: its age. */
const MADE = 'coachgate-made';

/**
 * Go's build cache for the runs in snapshots of the base. The user's GOCACHE is shared, and
 * writable by every go process of the user, the Player's included: an entry planted under the
 * action id of a base test package (`GODEBUG=gocachehash=1` prints what goes into it) is linked
 * into the trusted run's test binary as it stands, since Go verifies no cached output. So each run
 * in a snapshot builds in a private copy of a cache the server keeps per repository, removed when
 * the run ends; only the baseline, which runs the base's code and nothing of the Player's, adds
 * what it built to the kept cache, once it ended. No run of the Player's code writes a cache that
 * another run reads. A copy costs little: Go's cache holds the module's build outputs (2.6 MB for
 * a small one; Go before 1.20 ships the standard library compiled), and the first run of a
 * repository builds in an empty one.
 */
export async function withGoBuildCache<Outcome extends { timed_out: boolean; cancelled: boolean }>(
  worktree: string,
  cwd: string,
  command: TestCommand,
  use: 'fill' | 'snapshot',
  run: (goCache?: string) => Promise<Outcome>,
): Promise<Outcome> {
  if (command.runner !== 'go' && !existsSync(path.join(cwd, 'go.mod'))) return run();
  const kept = await keptCache(worktree, use);
  const directory = await mkdtemp(path.join(os.tmpdir(), 'coachgate-go-build-'));
  try {
    // A file Go's own trim removes meanwhile only leaves the copy short: a miss, built again.
    await copyEntries(kept, directory, true);
    const outcome = await run(directory);
    // Entries are named by what they hold (outputs) or what built them (actions): one another
    // baseline added first is kept.
    if (use === 'fill' && !outcome.timed_out && !outcome.cancelled)
      await copyEntries(directory, kept, false);
    return outcome;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** The repository's kept cache; a baseline starts it afresh once it is KEPT_DAYS old. */
async function keptCache(worktree: string, use: 'fill' | 'snapshot'): Promise<string> {
  const kept = path.join(await repositoryStateDirectory(worktree), 'go-build');
  if (use !== 'fill') return kept;
  const made = await stat(path.join(kept, MADE)).then(
    (info) => info.mtimeMs,
    () => undefined,
  );
  if (made !== undefined && Date.now() - made < KEPT_DAYS * DAY_MS) return kept;
  await rm(kept, { recursive: true, force: true });
  await ensurePrivateDirectory(kept);
  await writeFile(path.join(kept, MADE), '');
  return kept;
}

/**
 * Copies the entries of `from` into `to`, overwriting or not: with the system's `cp` where there is
 * one (a cache of 474 files took 400 ms through Node's fs.cp, 21 ms through cp), else Node's.
 */
async function copyEntries(from: string, to: string, overwrite: boolean): Promise<void> {
  if (!existsSync(from)) return;
  // Unsandboxed: cp copies the server's own directories (the kept cache, a run's private copy);
  // no program of the worktree runs.
  const copied = await childRun('cp', ['-R', '-p', ...(overwrite ? [] : ['-n']), `${from}/.`, to], {
    cwd: to,
    input: '',
    env: { PATH: process.env.PATH ?? '' },
    timeoutMs: COPY_TIMEOUT_MS,
    maxBytes: 64 * 1024,
  });
  if (copied.failed)
    await cp(from, to, { recursive: true, force: overwrite, errorOnExist: false }).catch(
      () => undefined,
    );
}

const COPY_TIMEOUT_MS = 120_000;
