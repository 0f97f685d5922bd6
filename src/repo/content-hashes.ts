import type { BigIntStats } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * Content hashes the server computed, kept per path with the identity of the file it read: device,
 * inode, size, modification and change time in nanoseconds. A tree fingerprint is taken several
 * times a turn; on a 50,000-file tree each one read every file again. A file whose identity is
 * unchanged has the content it had: a write sets its change time to the clock's, and no process
 * can set that time back (its modification time, it can). Two exceptions, both closed here:
 * - a write within the clock's tick of the read can leave the change time as it was, so a hash is
 *   kept only for a file whose change time is well before the pass began;
 * - a process holding a shared writable mapping of the file can change it again once the page is
 *   dirty, and neither time moves (docs/threat-model.md). A file some process of this user maps so
 *   when the pass begins is never kept; a mapping made later moves the change time at its first
 *   write, as any write does.
 */
const SETTLED_NS = 2_000_000_000n;
/** Enough for a large monorepo's worktree; past it the map starts again. */
const KEPT = 200_000;
/** Below this many files a pass reads them all: cheaper than looking for writable mappings. */
const WORTH_KEEPING = 1_000;

/** What a hash is of: a file's sha256, or its blob id as git would store it unfiltered. */
export type HashKind = 'sha256' | 'git-blob';

/** Per path, one entry for both kinds. */
const kept = new Map<string, { identity: string } & Partial<Record<HashKind, string>>>();

/** Kept hashes for one pass over a tree's files. */
export interface HashPass {
  /** The hash kept for `file` when `info` (its lstat now) is the identity it was read with. */
  known(kind: HashKind, file: string, info: BigIntStats): string | undefined;
  /** Keeps `hash` of `file`, read through a descriptor whose fstat was `info`. */
  keep(kind: HashKind, file: string, info: BigIntStats, hash: string): void;
}

/** A pass over `files` files, or none when there are too few for keeping to pay. */
export async function hashPass(files: number): Promise<HashPass | undefined> {
  if (files < WORTH_KEEPING) return undefined;
  const started = BigInt(Date.now()) * 1_000_000n;
  const mapped = await writablyMappedInodes();
  return {
    known: (kind, file, info) => {
      const entry = kept.get(file);
      return entry?.identity === identityOf(info) ? entry[kind] : undefined;
    },
    keep: (kind, file, info, hash) => {
      if (!mapped || mapped.has(info.ino) || started - info.ctimeNs < SETTLED_NS) return;
      const identity = identityOf(info);
      const entry = kept.get(file);
      if (entry?.identity === identity) entry[kind] = hash;
      else {
        if (kept.size >= KEPT) kept.clear();
        kept.set(file, { identity, [kind]: hash });
      }
    },
  };
}

function identityOf(info: BigIntStats): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeNs}:${info.ctimeNs}`;
}

/**
 * Inodes of the files any process of this user maps shared and writable (`rw?s` in
 * /proc/<pid>/maps), whatever the device: a mapping's device can differ from stat's (overlayfs), so
 * an inode number alone is enough to keep nothing. Undefined when a process of this user started
 * after the server hides its maps (a non-dumpable one): nothing is kept then. One older than the
 * server (a container's init) is not the Player's; other users' cannot write this user's files.
 * Undefined too where there is no /proc to read (macOS, Windows): nothing is kept there.
 */
async function writablyMappedInodes(): Promise<Set<bigint> | undefined> {
  const inodes = new Set<bigint>();
  let hidden = false;
  const entries = await readdir('/proc').catch(() => undefined);
  if (!entries) return undefined;
  const pids = entries.filter((name) => /^\d+$/.test(name));
  // A few at a time: the pass runs where descriptors can be short (a 50,000-file tree's walk).
  for (let start = 0; start < pids.length && !hidden; start += MAPS_AT_ONCE) {
    const batch = pids.slice(start, start + MAPS_AT_ONCE);
    for (const maps of await Promise.all(batch.map(processMaps))) {
      if (maps === undefined) hidden = true;
      for (const line of maps?.split('\n') ?? []) {
        const [, perms, , , inode] = line.split(/\s+/, 5);
        if (perms?.startsWith('rw') && perms[3] === 's' && inode && inode !== '0')
          inodes.add(BigInt(inode));
      }
    }
  }
  return hidden ? undefined : inodes;
}

const MAPS_AT_ONCE = 8;
const GONE = new Set(['ENOENT', 'ESRCH']);

/**
 * A process's maps; empty when it is gone or not this user's, or older than the server and hidden;
 * undefined when it may be this user's and cannot be read (hidden, or no descriptor to read it).
 */
async function processMaps(pid: string): Promise<string | undefined> {
  try {
    return await readFile(`/proc/${pid}/maps`, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    if (GONE.has(code)) return '';
    if (code !== 'EACCES' && code !== 'EPERM') return undefined;
    return (await ownProcess(pid)) ? undefined : '';
  }
}

/** Whether `pid` runs as this user and started after this process (gone: not; unreadable: may). */
async function ownProcess(pid: string): Promise<boolean> {
  const [status, started, server] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8').catch((error: NodeJS.ErrnoException) =>
      GONE.has(error.code ?? '') ? '' : undefined,
    ),
    startTime(pid),
    startTime('self'),
  ]);
  if (status === undefined) return true;
  const uids = /^Uid:\s+(.*)$/m.exec(status)?.[1]?.split(/\s+/) ?? [];
  if (!uids.includes(String(process.getuid?.()))) return false;
  return started === undefined || server === undefined || started >= server;
}

/** A process's start, in clock ticks since boot (/proc/<pid>/stat's 22nd field), if readable. */
async function startTime(pid: string): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // After the command name, which is in parentheses and may hold spaces: field 3 onwards.
  const started = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  return Number.isFinite(started) && stat !== '' ? started : undefined;
}
