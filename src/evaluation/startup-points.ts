import path from 'node:path';
import { isRunnerConfig, runnerSetupFiles } from '../scope/runner-setup-files.js';
import { readWorktreeFile } from '../repo/worktree-file.js';

/**
 * The start-up points the Player's own runner configuration names (src/scope/runner-setup-files.ts):
 * read only when the Player changed a runner configuration file, whose worktree text names them.
 * The names resolve against the base's files and the Player's changes.
 */
export async function playerStartupPoints(
  worktree: string,
  changed: readonly string[],
  baseFiles: ReadonlySet<string>,
): Promise<Set<string>> {
  const configs = changed.filter(isRunnerConfig);
  if (configs.length === 0) return new Set();
  const texts = new Map<string, string>();
  await Promise.all(
    configs.map(async (file) => {
      // A deleted config, or one linked outside the worktree, names nothing of the Player's.
      const text = await readWorktreeFile(worktree, path.join(worktree, file)).catch(
        () => undefined,
      );
      if (text !== undefined) texts.set(file, text);
    }),
  );
  return new Set(runnerSetupFiles(texts, new Set([...baseFiles, ...changed])));
}
