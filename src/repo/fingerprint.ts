import { createHash } from 'node:crypto';
import { lstat, readFile, readlink, realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { isServerWritten } from '../records/mirror-paths.js';
import { listWorkingFiles } from './git.js';
import { excludeFile, hiddenRunnerFiles, siteHookFiles } from './runner-loaded.js';
import { isInside } from './workspace.js';

const PARALLEL_READS = 16;

/**
 * A hash of the worktree's state: the path, mode and content of every tracked and untracked, non-ignored
 * file, minus what the server writes, plus everything the runner loads although git ignores it (hidden
 * conftest.py and runner config, virtualenv site hooks and interpreter) and `.git/info/exclude` itself.
 * Links are followed to the file they name. Equal hashes mean nothing the tests could see or load has
 * changed. `working` is the tree's listing when the caller reads it for something else too.
 */
export async function treeFingerprint(
  worktree: string,
  working: Promise<string[]> = listWorkingFiles(worktree),
): Promise<string> {
  // Writing a verdict must not make a run stale: the server's own files are not part of the tree's state.
  const [listed, hidden, siteHooks, exclude] = await Promise.all([
    working,
    hiddenRunnerFiles(worktree),
    siteHookFiles(worktree),
    excludeFile(worktree),
  ]);
  const files = [
    ...listed.filter((file) => !isServerWritten(file)),
    ...hidden.map((file) => `ignored:${file}`),
    ...siteHooks.map((file) => `ignored:${file}`),
    `ignored:${exclude}`,
  ];
  return hashEntries(await fileEntries(worktree, files));
}

/**
 * A hash of `files` under `root` (path, mode and content, links followed), or undefined when one of
 * them resolves outside `root` or is a dangling link: what lies outside can change while nothing
 * under `root` does, so the hash would not stand for what a run there reads.
 */
export async function filesDigest(
  root: string,
  files: readonly string[],
): Promise<string | undefined> {
  const realRoot = await realpath(root);
  const sorted = [...files].sort();
  const outside = await Promise.all(
    sorted.map(async (file) => {
      const real = await realpath(path.join(root, file)).catch(() => undefined);
      if (real !== undefined) return !isInside(realRoot, real);
      return lstat(path.join(root, file)).then(
        (info) => info.isSymbolicLink(),
        () => false, // not there: recorded as deleted
      );
    }),
  );
  if (outside.includes(true)) return undefined;
  return hashEntries(await fileEntries(root, sorted));
}

function hashEntries(entries: readonly string[]): string {
  const hash = createHash('sha256');
  for (const entry of entries) hash.update(entry).update('\n');
  return hash.digest('hex');
}

/** Entries of `files` (an `ignored:` prefix is kept as the label), read a bounded number at a time. */
async function fileEntries(root: string, files: readonly string[]): Promise<string[]> {
  const entries: string[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const index = next++;
      const file = files[index]!;
      entries[index] = await fileEntry(root, file.replace(/^ignored:/, ''), file);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, files.length) }, worker));
  return entries;
}

/** `label` keeps an ignored file apart from a tracked one of the same name. */
async function fileEntry(worktree: string, file: string, label: string): Promise<string> {
  const absolute = path.join(worktree, file);
  try {
    const info = await lstat(absolute);
    if (info.isSymbolicLink()) {
      // What a link names can change without the link changing (a file in the store, outside the tree).
      const target = await stat(absolute).catch(() => undefined);
      const content = target?.isFile() ? contentHash(await readFile(absolute)) : 'not a file';
      return `${label}\0link\0${await readlink(absolute)}\0${content}`;
    }
    if (!info.isFile()) return `${label}\0other`;
    return `${label}\0${info.mode & 0o111 ? 'x' : '-'}\0${contentHash(await readFile(absolute))}`;
  } catch {
    return `${label}\0deleted`;
  }
}

function contentHash(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
