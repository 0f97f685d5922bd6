import path from 'node:path';
import { declaredPytestPlugins } from '../scope/product-code-rules.js';
import { isRunnerConfig, runnerSetupFiles } from '../scope/runner-setup-files.js';
import { readManyAtCommit } from '../repo/git.js';
import { pytestPluginModules, VIRTUALENVS } from '../repo/runner-loaded.js';
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

/** A distribution's entry points, installed beside its code (an editable install's `src/x.egg-info`). */
const ENTRY_POINTS = /(?:^|\/)[^/]+\.(?:dist|egg)-info\/entry_points\.txt$/;
/** The manifests whose `pytest11` entry points an (editable) install registers with pytest. */
const PLUGIN_MANIFESTS: Record<string, 'pyproject' | 'setupCfg' | 'setupPy'> = {
  'pyproject.toml': 'pyproject',
  'setup.cfg': 'setupCfg',
  'setup.py': 'setupPy',
};

/**
 * The changed files whose `pytest11` entry points differ from the base's: an installed
 * distribution's `entry_points.txt` under the worktree, or a manifest declaring them. pytest's
 * plugin autoload imports each such module before any test, so the Player's run started a plugin
 * the trusted runs never load. A virtualenv's own distributions are the environment's (checked
 * against the pin: src/evaluation/planted-environment.ts), not the Player's changes.
 */
export async function changedPytestEntryPoints(
  worktree: string,
  baseCommit: string,
  changed: readonly string[],
): Promise<string[]> {
  const candidates = changed.filter(
    (file) =>
      !VIRTUALENVS.includes(file.split('/')[0]!) &&
      !file.includes('/site-packages/') &&
      (ENTRY_POINTS.test(file) || path.posix.basename(file) in PLUGIN_MANIFESTS),
  );
  if (candidates.length === 0) return [];
  const base = await readManyAtCommit(worktree, baseCommit, candidates);
  const found: string[] = [];
  for (const file of candidates) {
    const now = await readWorktreeFile(worktree, path.join(worktree, file)).catch(() => undefined);
    if (pluginsOf(file, base.get(file)) !== pluginsOf(file, now)) found.push(file);
  }
  return found;
}

/** The plugin modules a file registers, as one comparable string. */
function pluginsOf(file: string, text: string | undefined): string {
  if (text === undefined) return '';
  const manifest = PLUGIN_MANIFESTS[path.posix.basename(file)];
  const modules = manifest
    ? declaredPytestPlugins({ [manifest]: text })
    : pytestPluginModules(text);
  return [...modules].sort().join('\n');
}
