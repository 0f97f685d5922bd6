import { readdir } from 'node:fs/promises';
import path from 'node:path';

const NOT_MODULES = new Set([
  'node_modules',
  'venv',
  'tests',
  'test',
  'build',
  'dist',
  'docs',
  'examples',
]);

/**
 * Top-level module names that belong to the repository (root entries and `src/` entries), so a missing
 * first-party module reads as the Player's bug, not as missing infrastructure.
 */
export async function firstPartyModules(worktree: string): Promise<string[]> {
  const names = new Set<string>();
  for (const directory of [worktree, path.join(worktree, 'src')]) {
    const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.name.startsWith('.') || NOT_MODULES.has(entry.name)) continue;
      if (entry.isDirectory()) names.add(entry.name);
      else if (/\.(py|js|mjs|cjs|ts)$/.test(entry.name))
        names.add(entry.name.replace(/\.[^.]+$/, ''));
    }
  }
  return [...names].sort();
}
