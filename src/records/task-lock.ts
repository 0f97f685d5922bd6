import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { ensurePrivateDirectory, taskStateDirectory } from './state-directory.js';
import { repairMirror } from './mirrored.js';
import { namingFile } from './files.js';

interface LockOwner {
  pid: number;
  host: string;
  acquired_at: string;
}

/** How long a lock without a readable owner (made by hand, or by another tool) blocks before it expires. */
const UNKNOWN_OWNER_EXPIRY_MS = 5_000;
/** A live owner on another host cannot be checked; its lock expires after this. */
const REMOTE_OWNER_EXPIRY_MS = 10 * 60_000;
const WAIT_LIMIT_MS = 120_000;

/**
 * Serialises every read-modify-write of one task's records across processes (two Coaches, a hook and an
 * agent may call at once; two servers may share a state directory). The lock is a directory in the task's
 * state directory, published with its owner by one rename. A lock whose owner process is gone is taken over
 * at once; one with an unknown owner or an mtime in the future is reported (stderr) and expires.
 * Callers re-read their files inside `work`, never before it.
 */
export async function withTaskLock<T>(
  worktree: string,
  taskId: string,
  work: () => Promise<T>,
): Promise<T> {
  const directory = await taskStateDirectory(worktree, taskId);
  await ensurePrivateDirectory(directory);
  const lock = path.join(directory, '.lock');
  const mine = await acquire(lock);
  await removeDeadStagingDirectories(directory);
  try {
    // A write killed half-way (kill -9) left temp files or a mirror behind the state: fix both first.
    await repairMirror(worktree, taskId);
    return await work();
  } finally {
    // Only remove the lock if it is still ours (it may have been taken over as expired).
    const owner = await readOwner(lock);
    if (typeof owner === 'object' && owner.acquired_at === mine.acquired_at)
      await moveAsideAndRemove(lock, 'released');
  }
}

async function acquire(lock: string): Promise<LockOwner> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const owner: LockOwner = {
      pid: process.pid,
      host: os.hostname(),
      acquired_at: `${new Date().toISOString()}#${randomBytes(4).toString('hex')}`,
    };
    const staging = `${lock}.new-${process.pid}-${randomBytes(4).toString('hex')}`;
    await mkdir(staging);
    try {
      await writeFile(path.join(staging, 'owner.json'), JSON.stringify(owner));
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw namingFile(error, path.join(staging, 'owner.json'));
    }
    try {
      await rename(staging, lock); // fails while another non-empty lock directory is in place
      return owner;
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOTEMPTY' && code !== 'EEXIST' && code !== 'EISDIR') throw error;
    }
    const expired = await expiry(lock);
    if (expired) {
      process.stderr.write(`coachgate: taking over the task lock ${lock}: ${expired}\n`);
      await takeOver(lock);
      continue;
    }
    if (Date.now() - started > WAIT_LIMIT_MS) {
      throw new CallerError(
        `The task's records are locked by another coachgate process (${lock}) for over ${WAIT_LIMIT_MS / 1000} s.`,
        'Retry when the other call has finished.',
      );
    }
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(100, 5 * 2 ** attempt) + Math.random() * 10),
    );
  }
}

/** Why the lock no longer protects anyone, or null while its owner may still be working. */
async function expiry(lock: string): Promise<string | null> {
  const info = await stat(lock).catch(() => undefined);
  if (!info) return null; // released meanwhile: just retry
  const age = Date.now() - info.mtimeMs;
  if (age < -1_000) return `its mtime ${info.mtime.toISOString()} is in the future`;
  const owner = await readOwner(lock);
  // Locks are published whole (one rename), so a present but empty or garbled owner.json is never a
  // lock being made: it is what a failed write (disk full, a crash before the data reached the disk) leaves.
  if (owner === 'unreadable') return 'its owner.json is empty or not JSON (a write that failed)';
  if (!owner)
    return age > UNKNOWN_OWNER_EXPIRY_MS
      ? `it has no readable owner and is ${Math.round(age / 1000)} s old`
      : null;
  if (owner.host !== os.hostname())
    return age > REMOTE_OWNER_EXPIRY_MS
      ? `its owner on ${owner.host} has held it for ${Math.round(age / 1000)} s`
      : null;
  return processAlive(owner.pid) ? null : `its owner process ${owner.pid} is gone`;
}

async function takeOver(lock: string): Promise<void> {
  await moveAsideAndRemove(lock, 'expired');
}

/** One atomic rename ends the lock; removing its files afterwards cannot touch a newer lock. */
async function moveAsideAndRemove(lock: string, why: string): Promise<void> {
  const aside = `${lock}.${why}-${process.pid}-${randomBytes(4).toString('hex')}`;
  if (
    await rename(lock, aside).then(
      () => true,
      () => false,
    )
  )
    await rm(aside, { recursive: true, force: true });
}

/** `.lock.<why>-<pid>-<hex>` directories left by a process killed while taking or releasing a lock. */
async function removeDeadStagingDirectories(directory: string): Promise<void> {
  for (const name of await readdir(directory).catch(() => [] as string[])) {
    const pid = /^\.lock\.[a-z]+-(\d+)-[0-9a-f]+$/.exec(name)?.[1];
    if (pid !== undefined && !processAlive(Number(pid)))
      await rm(path.join(directory, name), { recursive: true, force: true });
  }
}

/** The lock's owner; undefined without an owner.json, 'unreadable' when it is empty or garbled. */
async function readOwner(lock: string): Promise<LockOwner | 'unreadable' | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(lock, 'owner.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? owner : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
