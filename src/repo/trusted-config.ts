import { defaultConfig, parseConfig, type Config } from '../config/config.js';
import { readAtCommit, resolveBase, type BaseCommit } from './git.js';

export const CONFIG_PATH = '.guardkit/config.yaml';

export interface TrustedConfig {
  base: BaseCommit;
  config: Config;
  warnings: string[];
}

/**
 * Reads `.guardkit/config.yaml` from the base commit, never the working tree, so a Player cannot relax its
 * own gates. `coachgate.base_ref` in that file may move the base; the file is then re-read at the new base.
 */
export async function loadTrustedConfig(
  worktree: string,
  baseOverride?: string,
): Promise<TrustedConfig> {
  let base = await resolveBase(worktree, baseOverride);
  let parsed = await configAt(worktree, base);
  const configuredRef = parsed.config.coachgate.base_ref;
  if (!baseOverride && configuredRef) {
    base = await resolveBase(worktree, configuredRef);
    parsed = await configAt(worktree, base);
  }
  return { base, ...parsed };
}

async function configAt(
  worktree: string,
  base: BaseCommit,
): Promise<{ config: Config; warnings: string[] }> {
  const text = await readAtCommit(worktree, base.commit, CONFIG_PATH);
  if (text === undefined) return { config: defaultConfig(), warnings: [] };
  return parseConfig(text, `${CONFIG_PATH} at ${base.commit.slice(0, 12)}`);
}
