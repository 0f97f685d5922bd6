import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathExists } from '../records/files.js';
import { gitForCheckout } from './git.js';

/** Untracked toolchain directories a base checkout borrows from the worktree, so both run alike. */
const SHARED_TOOLCHAINS = ['node_modules', '.venv', 'venv', 'target'];

/**
 * Runs `use` in a temporary detached worktree of `commit` (toolchains borrowed from `worktree`), then removes
 * it whatever happens. The Player's tree is never touched.
 */
export async function withDetachedCheckout<T>(
  worktree: string,
  commit: string,
  use: (checkout: string) => Promise<T>,
): Promise<T> {
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'coachgate-base-'));
  const checkout = path.join(scratch, 'tree');
  // A checkout runs filter drivers: the hardened git empties the ones the repository configures.
  const repo = await gitForCheckout(worktree);
  await repo.raw(['worktree', 'add', '--detach', '--force', checkout, commit]);
  try {
    for (const name of SHARED_TOOLCHAINS) {
      const source = path.join(worktree, name);
      if (await pathExists(source))
        await symlink(source, path.join(checkout, name)).catch(() => undefined);
    }
    return await use(checkout);
  } finally {
    await repo.raw(['worktree', 'remove', '--force', checkout]).catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
    await repo.raw(['worktree', 'prune']).catch(() => undefined);
  }
}
