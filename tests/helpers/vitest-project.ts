import { symlinkSync } from 'node:fs';
import path from 'node:path';
import type { TempRepo } from './git-repo.js';

/** An ES module project whose test command is `vitest run`, its node_modules left out of git. */
export const VITEST_PROJECT = {
  'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
  '.gitignore': 'node_modules/\n',
};

/** The repository's node_modules (the pinned vitest), linked into a task's repository. */
export const borrowNodeModules = (repo: TempRepo) =>
  symlinkSync(path.resolve('node_modules'), path.join(repo.dir, 'node_modules'));
