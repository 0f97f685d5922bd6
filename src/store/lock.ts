import { mkdir } from 'node:fs/promises';
import lockfile from 'proper-lockfile';
import { taskDirectory } from './paths.js';

/**
 * Serialises every read-modify-write of one task's records across processes (two Coaches, a hook and an
 * agent may call at once). Callers re-read their files inside `work`, never before it.
 */
export async function withTaskLock<T>(worktree: string, taskId: string, work: () => Promise<T>): Promise<T> {
  const directory = taskDirectory(worktree, taskId);
  await mkdir(directory, { recursive: true });
  const release = await lockfile.lock(directory, {
    lockfilePath: `${directory}/.lock`,
    stale: 30_000,
    retries: { retries: 600, factor: 1.2, minTimeout: 5, maxTimeout: 100, randomize: true },
  });
  try {
    return await work();
  } finally {
    await release();
  }
}
