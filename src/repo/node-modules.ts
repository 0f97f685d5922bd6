import type { Stats } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import { eventLoopSlices } from './event-loop-slices.js';
import { cachedDigest, fileDigest } from './file-digest.js';
import { entriesIfPresent, lstatIfPresent } from './present-entries.js';

/**
 * Entries of a node_modules directory that are not installed packages and hold nothing a test
 * process loads as a dependency: tools' caches and build output (`.cache` for babel-loader, nyc,
 * eslint; `.vite` for Vite's optimised deps and vitest's results; `.vite-temp` for bundled config
 * files; `.vitest`; `.tmp` for `tsc -b`'s build info in Vite's templates; `.prisma` for the client
 * `prisma generate` writes from the project's own schema, which a task may change), rewritten by
 * honest runs and builds, and the package managers' own state files.
 */
const OUT_OF_SCOPE = new Set([
  '.cache',
  '.prisma',
  '.vite',
  '.vite-temp',
  '.vitest',
  '.tmp',
  '.package-lock.json',
  '.modules.yaml',
  '.yarn-state.yml',
  '.yarn-integrity',
]);

/** Files read and links resolved at once. */
const PARALLEL = 64;

/**
 * The borrowed node_modules by content: worktree-relative path (`node_modules/chai/lib/chai.js`) to
 * a regular file's sha256 (urlsafe base64) or a link's `link:<target as written>`. Every file of
 * every installed package, nested node_modules and `.bin` entries included; links are not followed
 * (a workspace package links into the worktree: product code, snapshotted apart), except
 * node_modules itself when it is one. Undefined when the worktree has no node_modules.
 */
export async function nodeModulesContent(
  worktree: string,
): Promise<Record<string, string> | undefined> {
  const root = await realpath(path.join(worktree, 'node_modules')).catch(() => undefined);
  if (!root || !(await lstat(root)).isDirectory()) return undefined;
  const { files, links } = await walk(root);
  const content: Record<string, string> = {};
  const unknown: [string, Stats][] = [];
  // Unchanged files answer from the cache without a promise each: most of a re-verification.
  for (const [file, info] of files) {
    const known = cachedDigest(`${root}/${file}`, info);
    if (known) content[`node_modules/${file}`] = known;
    else unknown.push([file, info]);
  }
  await inBatches(unknown, async ([file, info]) => {
    const digest = await fileDigest(`${root}/${file}`, info);
    if (digest) content[`node_modules/${file}`] = digest;
  });
  await inBatches(links, async (link) => {
    content[`node_modules/${link}`] = `link:${await readlink(path.join(root, link))}`;
  });
  return content;
}

/**
 * The installed package a node_modules path belongs to (`node_modules/a/node_modules/@s/b` for
 * `node_modules/a/node_modules/@s/b/lib/x.js`): the deepest node_modules entry, as Node resolves.
 */
export function packageDirectory(file: string): string | undefined {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(file);
  return match?.[1];
}

/** A `.bin` entry: a runner or tool command npm links for a package's `bin`. */
export function isBinEntry(file: string): boolean {
  return /(?:^|\/)node_modules\/\.bin\/[^/]+$/.test(file);
}

/** A file the content walk leaves out: under a tool's cache or state entry of a node_modules. */
export function isOutOfScope(file: string): boolean {
  const parts = file.split('/');
  return parts.some(
    (part, index) => index > 0 && parts[index - 1] === 'node_modules' && OUT_OF_SCOPE.has(part),
  );
}

/** Whether `dir` (relative to the top node_modules) is itself a node_modules directory. */
function inNodeModules(dir: string): boolean {
  return dir === '' || dir === 'node_modules' || dir.endsWith('/node_modules');
}

/**
 * Every file (with its lstat) and link under `root`, out-of-scope entries left out. Metadata calls
 * are synchronous (a third of the time of 30,000 promises), in slices that yield to the event loop.
 */
async function walk(root: string): Promise<{ files: [string, Stats][]; links: string[] }> {
  const files: [string, Stats][] = [];
  const links: string[] = [];
  const directories = [''];
  const slice = eventLoopSlices();
  while (directories.length > 0) {
    const dir = directories.pop()!;
    for (const entry of entriesIfPresent(dir ? `${root}/${dir}` : root)) {
      if (inNodeModules(dir) && OUT_OF_SCOPE.has(entry.name)) continue;
      const relative = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) directories.push(relative);
      else if (entry.isSymbolicLink()) links.push(relative);
      else if (entry.isFile()) {
        const info = lstatIfPresent(`${root}/${relative}`); // root is a real path: no join needed
        if (info) files.push([relative, info]);
      }
    }
    await slice();
  }
  return { files, links };
}

async function inBatches<T>(items: T[], each: (item: T) => Promise<void>): Promise<void> {
  for (let start = 0; start < items.length; start += PARALLEL)
    await Promise.all(items.slice(start, start + PARALLEL).map(each));
}
