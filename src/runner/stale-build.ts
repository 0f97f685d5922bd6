import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { git, listWorkingFiles } from '../repo/git.js';
import { readRegularFile } from '../repo/read-text.js';

export interface StaleBuild {
  /** The git-ignored build directory the package's entry points name (`dist`, `build`, `lib`, `out`). */
  directory: string;
  /** A source file changed after the newest file of the build. */
  newerSource: string;
  /** Whether the package has a `build` script to rebuild it with. */
  hasBuildScript: boolean;
}

const BUILD_DIRECTORIES = new Set(['dist', 'build', 'lib', 'out']);
const SOURCE_FILE = /\.(?:[cm]?[jt]sx?)$/;
const TEST_FILE = /(?:^|\/)(?:tests?|__tests__)\/|\.(?:test|spec)\.[cm]?[jt]sx?$/;
const MAX_BUILD_FILES = 5_000;

/**
 * Tests that import the package through its `main`/`exports` run the build, not the sources: when that
 * build is git-ignored (so the Player's change cannot be in it) and older than a source file, a pass
 * would be a pass of the old code.
 */
export async function staleBuild(worktree: string): Promise<StaleBuild | undefined> {
  const manifest = (await readRegularFile(path.join(worktree, 'package.json')).then(
    JSON.parse,
    () => undefined,
  )) as Record<string, unknown> | undefined;
  if (!manifest) return undefined;
  const directories = new Set(
    entryPoints([manifest.main, manifest.module, manifest.exports])
      .map((entry) => path.posix.normalize(entry).split('/')[0] ?? '')
      .filter((directory) => BUILD_DIRECTORIES.has(directory)),
  );
  for (const directory of directories) {
    const built = await newestModification(path.join(worktree, directory));
    if (built === undefined || !(await isIgnored(worktree, directory))) continue;
    const sources = (await listWorkingFiles(worktree)).filter(
      (file) =>
        SOURCE_FILE.test(file) && !TEST_FILE.test(file) && !file.startsWith(`${directory}/`),
    );
    for (const source of sources) {
      const modified = await stat(path.join(worktree, source)).then(
        (info) => info.mtimeMs,
        () => 0,
      );
      if (modified > built) {
        const scripts = manifest.scripts as Record<string, unknown> | undefined;
        return {
          directory,
          newerSource: source,
          hasBuildScript: typeof scripts?.build === 'string',
        };
      }
    }
  }
  return undefined;
}

/** Every relative path in `main`, `module` and the (possibly nested) `exports` map. */
function entryPoints(values: unknown[]): string[] {
  return values.flatMap((value): string[] => {
    if (typeof value === 'string')
      return value.startsWith('./') || !value.startsWith('.') ? [value.replace(/^\.\//, '')] : [];
    if (value && typeof value === 'object') return entryPoints(Object.values(value));
    return [];
  });
}

async function isIgnored(worktree: string, directory: string): Promise<boolean> {
  const ignored = await git(worktree)
    .raw(['check-ignore', '--', directory])
    .catch(() => '');
  return ignored.trim() !== '';
}

/** The newest modification time of the files under `directory`, or undefined when it holds none. */
async function newestModification(directory: string): Promise<number | undefined> {
  const entries = await readdir(directory, { recursive: true, withFileTypes: true }).catch(
    () => [],
  );
  let newest: number | undefined;
  for (const entry of entries.filter((candidate) => candidate.isFile()).slice(0, MAX_BUILD_FILES)) {
    const modified = (await stat(path.join(entry.parentPath, entry.name))).mtimeMs;
    newest = Math.max(newest ?? 0, modified);
  }
  return newest;
}
