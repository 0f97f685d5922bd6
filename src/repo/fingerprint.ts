import { createHash } from 'node:crypto';
import { lstat, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { isServerWritten } from '../store/paths.js';
import { listWorkingFiles } from './git.js';

const PARALLEL_READS = 16;

/**
 * A hash of the worktree's state: every tracked and untracked, non-ignored file's path, mode and content,
 * minus what the server writes. Equal hashes mean nothing the tests could see has changed.
 */
export async function treeFingerprint(worktree: string): Promise<string> {
  // Writing a verdict must not make a run stale: the server's own files are not part of the tree's state.
  const files = (await listWorkingFiles(worktree)).filter((file) => !isServerWritten(file));
  const entries: string[] = new Array(files.length);
  let next = 0;
  const worker = async () => {
    while (next < files.length) {
      const index = next++;
      entries[index] = await fileEntry(worktree, files[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, files.length) }, worker));
  const hash = createHash('sha256');
  for (const entry of entries) hash.update(entry).update('\n');
  return hash.digest('hex');
}

async function fileEntry(worktree: string, file: string): Promise<string> {
  const absolute = path.join(worktree, file);
  try {
    const info = await lstat(absolute);
    if (info.isSymbolicLink()) return `${file}\0link\0${await readlink(absolute)}`;
    if (!info.isFile()) return `${file}\0other`;
    const content = createHash('sha256')
      .update(await readFile(absolute))
      .digest('hex');
    return `${file}\0${info.mode & 0o111 ? 'x' : '-'}\0${content}`;
  } catch {
    return `${file}\0deleted`;
  }
}
