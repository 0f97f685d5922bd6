import { readFileSync, realpathSync } from 'node:fs';
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { readManyAtCommit } from '../repo/git.js';
import { isBinEntry, nodeModulesContent, packageDirectory } from '../repo/node-modules.js';
import { npmCacheDirectory, strongestHash } from '../repo/npm-cache.js';
import type { PlantedFile } from './planted-file.js';
import { pnpmShim } from './pnpm-shim.js';
import { yarnLockEntries } from './yarn-lock.js';
import {
  publishedPackages,
  type LockedPackage,
  type UnverifiedPackage,
} from './published-packages.js';

const RESTORE = 'Restore it (npm ci)';
/**
 * Where npm places a package, as package-lock.json keys it (`node_modules/a/node_modules/@s/b`). A
 * node_modules under another directory of a package (`pnpm/dist/node_modules/…`) ships inside that
 * package's tarball and pnpm's `.pnpm` store is its own layout: the lock describes neither.
 */
const LOCKED_PATH =
  /^node_modules\/(?:@[^/.][^/]*\/)?[^/.][^/]*(?:\/node_modules\/(?:@[^/.][^/]*\/)?[^/.][^/]*)*$/;
/** Findings named one by one; a reinstalled or wiped tree is summed up after these. */
const NAMED_AT_MOST = 20;

/** An entry of package-lock.json's `packages` (lockfileVersion 2 and 3). */
interface LockEntry extends LockedPackage {
  name?: string;
}

/** The borrowed node_modules judged: files to refuse, packages nothing could verify. */
export interface NodeModulesCheck {
  planted: PlantedFile[];
  unverified: UnverifiedPackage[];
}

/** The borrowed tree as the `.bin` checks see it. */
interface InstalledTree {
  now: Record<string, string>;
  pinned: Record<string, string> | undefined;
  /** Whether the project has a package-lock.json (with `packages`). */
  locked: boolean;
  /** Whether a package directory passed the content and lock checks. */
  verified: (directory: string) => boolean;
  manifests: Map<string, InstalledManifest>;
}

/** The package.json fields judged here. */
interface InstalledManifest {
  name?: string;
  version?: string;
  bin?: string | Record<string, string>;
  scripts?: Record<string, string>;
}

/**
 * The borrowed node_modules judged by content, before the trusted runs use it: each package against
 * the tarball its registry published (published-packages.ts), against what it held when the task's
 * base was pinned (`pinned`, when the pin recorded it), against the project's package-lock.json, and
 * its `.bin` entries against the packages they link into. Each finding names a file and how to
 * restore it; packages nothing could compare with a published tarball are listed apart.
 *
 * A package absent at the pin that package-lock.json lists at its installed version is a dependency
 * the Player added (`npm install` after editing package.json): the Player's code, as its product
 * code is.
 */
export async function nodeModulesProblems(
  worktree: string,
  pinned: Record<string, string> | undefined,
  baseCommit?: string,
): Promise<NodeModulesCheck> {
  const now = await nodeModulesContent(worktree);
  if (!now) return { planted: [], unverified: [] };
  const manifests = await installedManifests(worktree, now);
  const placed = [...manifests].filter(([directory]) => LOCKED_PATH.test(directory));
  const [lock, locks, cache] = await Promise.all([
    lockPackages(worktree),
    publishingLocks(worktree, baseCommit, { manifests: new Map(placed), content: now }),
    npmCacheDirectory(),
  ]);
  const pinnedPackages = new Set(pinned ? packagesOf(pinned) : []);
  const versions = new Map(placed.map(([directory, manifest]) => [directory, manifest.version]));
  const published = await publishedPackages({ content: now, versions, cache, ...locks });
  const found = [
    ...published.planted,
    ...(pinned ? changesSincePin(pinned, now, pinnedPackages, lock !== undefined) : []),
    ...(lock ? lockMismatches(manifests, lock) : []),
  ].filter((item, index, all) => all.findIndex((other) => other.file === item.file) === index);
  const refused = new Set(found.map((item) => packageDirectory(item.file)));
  const verified = (directory: string) =>
    manifests.has(directory) &&
    !refused.has(directory) &&
    (!pinned || pinnedPackages.has(directory) || lock?.has(directory) === true);
  const tree = { now, pinned, locked: lock !== undefined, verified, manifests };
  found.push(...binProblems(worktree, tree));
  const unverified = published.unverified.filter((item) => !refused.has(item.package));
  return { planted: capped(found), unverified };
}

/**
 * The locks that name each package's published tarball: package-lock.json (or npm-shrinkwrap.json,
 * or else yarn.lock) as the base commits it, and the worktree's own, or else the lock npm wrote into
 * node_modules at install (`.package-lock.json`) or the worktree's yarn.lock, for a project that
 * commits no npm lock.
 */
async function publishingLocks(
  worktree: string,
  baseCommit: string | undefined,
  installed: YarnInstalled,
): Promise<{ baseLock?: Map<string, LockEntry>; worktreeLock?: Map<string, LockEntry> }> {
  const names = ['npm-shrinkwrap.json', 'package-lock.json'];
  const atBase = baseCommit
    ? await readManyAtCommit(worktree, baseCommit, [...names, YARN_LOCK])
    : new Map<string, string>();
  const baseText = names.map((name) => atBase.get(name)).find(Boolean);
  const baseYarn = atBase.get(YARN_LOCK);
  const baseLock =
    baseText !== undefined
      ? packagesOfLock(baseText)
      : baseYarn !== undefined
        ? yarnPackages(baseYarn, installed)
        : undefined;
  const worktreeLock =
    (await lockPackages(worktree)) ??
    packagesOfLock(await readFile(await hiddenLock(worktree), 'utf8').catch(() => '')) ??
    yarnPackages(await readFile(path.join(worktree, YARN_LOCK), 'utf8').catch(() => ''), installed);
  return { ...(baseLock ? { baseLock } : {}), ...(worktreeLock ? { worktreeLock } : {}) };
}

const YARN_LOCK = 'yarn.lock';

/** The installed packages yarn.lock's entries are placed on, and their files. */
interface YarnInstalled {
  manifests: Map<string, InstalledManifest>;
  content: Record<string, string>;
}

/**
 * yarn.lock's entries placed where they are installed: yarn 1 records no paths, so each installed
 * package takes the entry of its name at its installed version. yarn.lock does not say which
 * packages have install scripts; the installed package.json and a `binding.gyp` (node-gyp's
 * implied install) do, both compared with the tarball like every other file, as npm's lock derives
 * `hasInstallScript` from them.
 */
function yarnPackages(text: string, installed: YarnInstalled): Map<string, LockEntry> | undefined {
  const entries = yarnLockEntries(text);
  if (entries.size === 0) return undefined;
  const placed = new Map<string, LockEntry>();
  for (const [directory, manifest] of installed.manifests) {
    const entry = entries.get(`${packageName(directory)}@${manifest.version}`);
    const scripts = manifest.scripts ?? {};
    const hasInstallScript =
      ['preinstall', 'install', 'postinstall'].some((name) => name in scripts) ||
      `${directory}/binding.gyp` in installed.content;
    // A yarn entry without a strong integrity (old locks give sha1) binds nothing: npm's own record
    // of what it installed, where there is one, is read for that package instead.
    if (entry && strongestHash(entry.integrity ?? ''))
      placed.set(directory, { ...entry, ...(hasInstallScript ? { hasInstallScript } : {}) });
  }
  return placed;
}

/** npm's record of the tree it installed, in node_modules itself (wherever that link leads). */
async function hiddenLock(worktree: string): Promise<string> {
  const modules = await realpath(path.join(worktree, 'node_modules')).catch(() => worktree);
  return path.join(modules, '.package-lock.json');
}

/**
 * Files edited, removed, or added to a package that was installed at the pin. A package added since
 * is left to the lock; without one, only when nested inside a package installed then (which it
 * would shadow for that package's imports) is it refused here.
 */
function changesSincePin(
  pinned: Record<string, string>,
  now: Record<string, string>,
  pinnedPackages: Set<string>,
  locked: boolean,
): PlantedFile[] {
  const shadows = (owner: string) =>
    !locked && pinnedPackages.has(owner.slice(0, Math.max(0, owner.lastIndexOf('/node_modules/'))));
  const found: PlantedFile[] = [];
  for (const file of new Set([...Object.keys(pinned), ...Object.keys(now)])) {
    if (pinned[file] === now[file]) continue;
    const owner = packageDirectory(file);
    const name = owner ? `the installed package ${packageName(owner)}` : 'node_modules';
    if (now[file] === undefined)
      found.push({
        file,
        problem: `a file of ${name} removed since the base was pinned. ${RESTORE}`,
      });
    else if (pinned[file] !== undefined)
      found.push({
        file,
        problem: `a file of ${name} changed since the base was pinned (edited in place): code in the test process is not the package that was installed. ${RESTORE}`,
      });
    // An added .bin entry is judged by where it links; an added package by the lock.
    else if (!isPlacedBin(file) && (!owner || pinnedPackages.has(owner) || shadows(owner)))
      found.push({
        file,
        problem: `a file added to ${name} since the base was pinned. ${RESTORE}`,
      });
  }
  return found;
}

/** Installed packages the lock does not list at that path, or lists at another version or name. */
function lockMismatches(
  manifests: Map<string, InstalledManifest>,
  lock: Map<string, LockEntry>,
): PlantedFile[] {
  const found: PlantedFile[] = [];
  for (const [directory, manifest] of manifests) {
    if (!LOCKED_PATH.test(directory)) continue;
    const entry = lock.get(directory);
    const installed = `${manifest.name ?? '?'}@${manifest.version ?? '?'}`;
    const expectedName = entry?.name ?? packageName(directory);
    const problem = !entry
      ? `an installed package (${installed}) that package-lock.json does not list at ${directory}`
      : entry.version !== manifest.version || expectedName !== manifest.name
        ? `an installed package (${installed}) where package-lock.json has ${expectedName}@${entry.version ?? '?'}`
        : undefined;
    if (problem)
      found.push({ file: `${directory}/package.json`, problem: `${problem}. ${RESTORE}` });
  }
  return found;
}

/**
 * `.bin` entries that do not run a verified package's own command: not a link, a link that resolves
 * outside the package it names, into a package that is not verified, or to a file that package does
 * not declare as that command. A runner planted as a package of its own is refused here.
 */
function binProblems(worktree: string, tree: InstalledTree): PlantedFile[] {
  const found: PlantedFile[] = [];
  for (const [file, fingerprint] of Object.entries(tree.now)) {
    const before = tree.pinned?.[file];
    // One changed since the pin is already named.
    if (!isPlacedBin(file) || (before !== undefined && before !== fingerprint)) continue;
    const problem = fingerprint.startsWith('link:')
      ? commandProblem(worktree, file, linkTarget(file, fingerprint), tree)
      : shimProblem(worktree, file, tree);
    if (problem) found.push({ file, problem: `${problem}. ${RESTORE}` });
  }
  return found;
}

/** Where a `.bin` link leads, relative to the worktree. */
function linkTarget(file: string, fingerprint: string): string {
  return path.posix.join(path.posix.dirname(file), fingerprint.slice('link:'.length));
}

/**
 * Why a `.bin` file that is not a link does not run a verified package's own command: pnpm writes
 * a shell shim (pnpm-shim.ts) that runs node on the command's file, judged as a link to that file
 * would be, with NODE_PATH only inside the installed tree.
 */
function shimProblem(worktree: string, file: string, tree: InstalledTree): string | undefined {
  const text = readTextSync(path.join(worktree, file));
  const shim = text === undefined ? undefined : pnpmShim(text);
  if (!shim)
    return 'not a link npm installed nor a shim pnpm writes: a command planted in node_modules/.bin';
  const modules = [
    path.join(worktree, 'node_modules'),
    realPath(path.join(worktree, 'node_modules')),
  ];
  const outside = shim.nodePath.find(
    (directory) =>
      path.posix.normalize(directory) !== directory ||
      !modules.some((root) => root && directory.startsWith(root + path.sep)),
  );
  if (outside !== undefined)
    return `a command shim whose NODE_PATH names ${outside}, outside the installed node_modules`;
  const target = path.posix.join(path.posix.dirname(file), shim.target);
  return commandProblem(worktree, file, target, tree);
}

/** Why a `.bin` entry leading to `target` does not run a verified package's own command, if not. */
function commandProblem(
  worktree: string,
  file: string,
  target: string,
  tree: InstalledTree,
): string | undefined {
  const command = path.posix.basename(file);
  const owner = packageDirectory(target);
  if (!owner || !target.startsWith('node_modules/') || isBinEntry(`${owner}/${command}`))
    return `a runner binary linking to ${target}, outside every installed package`;
  const real = realPath(path.join(worktree, target));
  const realOwner = realPath(path.join(worktree, owner));
  if (!real || !realOwner || !real.startsWith(realOwner + path.sep))
    return `a runner binary linking to ${target}, which does not resolve inside ${owner}`;
  // A workspace package is a link into the worktree: its command is the project's own code.
  if (tree.now[owner]?.startsWith('link:')) return undefined;
  const manifest = tree.manifests.get(owner);
  if (!manifest) {
    // Nothing to verify it against without a pin or a lock (npm always installs a package.json).
    return tree.pinned || tree.locked
      ? `a runner binary from ${owner}, which is no installed package (no package.json)`
      : undefined;
  }
  if (!tree.verified(owner))
    return `a runner binary from ${owner}, a package neither installed when the base was pinned nor listed by package-lock.json`;
  return declaredBins(owner, manifest).get(command) === target
    ? undefined
    : `a runner binary linking to ${target}, which ${owner}/package.json does not declare as its ${command} command`;
}

/**
 * A `.bin` entry npm linked: in the top node_modules (first on the runs' PATH) or an installed
 * package's own node_modules. One shipped inside a package's tarball is that package's file.
 */
function isPlacedBin(file: string): boolean {
  if (!isBinEntry(file)) return false;
  const modules = file.slice(0, file.lastIndexOf('/.bin/'));
  return modules === 'node_modules' || LOCKED_PATH.test(modules.slice(0, -'/node_modules'.length));
}

/** A package's commands as npm links them: `bin` as a string is named after the package. */
function declaredBins(directory: string, manifest: InstalledManifest): Map<string, string> {
  const bin =
    typeof manifest.bin === 'string'
      ? { [packageName(directory).split('/').pop()!]: manifest.bin }
      : (manifest.bin ?? {});
  return new Map(
    Object.entries(bin).map(([name, file]) => [name, path.posix.join(directory, file)]),
  );
}

/** Parsed package.json files by their sha256: an unchanged tree reads none of them again. */
const parsedManifests = new Map<string, InstalledManifest>();

/** Every installed package's package.json (those walked as files, not linked workspaces). */
async function installedManifests(
  worktree: string,
  content: Record<string, string>,
): Promise<Map<string, InstalledManifest>> {
  const manifests = new Map<string, InstalledManifest>();
  for (const directory of packagesOf(content)) {
    const digest = content[`${directory}/package.json`]!;
    let manifest = parsedManifests.get(digest);
    if (!manifest) {
      const file = path.join(worktree, directory, 'package.json');
      const text = await readFile(file, 'utf8').catch(() => '{}');
      manifest = parsedObject(text) as InstalledManifest;
      parsedManifests.set(digest, manifest);
    }
    manifests.set(directory, manifest);
  }
  return manifests;
}

/** The package directories whose package.json a content record holds. */
function packagesOf(content: Record<string, string>): string[] {
  return Object.keys(content)
    .filter((file) => file.endsWith('/package.json') && !content[file]!.startsWith('link:'))
    .map((file) => file.slice(0, -'/package.json'.length))
    .filter((directory) => packageDirectory(`${directory}/package.json`) === directory);
}

/** The worktree's package-lock.json `packages` by path; undefined without one (or a v1 lock). */
async function lockPackages(worktree: string): Promise<Map<string, LockEntry> | undefined> {
  return packagesOfLock(
    await readFile(path.join(worktree, 'package-lock.json'), 'utf8').catch(() => ''),
  );
}

function packagesOfLock(text: string): Map<string, LockEntry> | undefined {
  const packages = (parsedObject(text) as { packages?: Record<string, LockEntry> }).packages;
  return packages ? new Map(Object.entries(packages)) : undefined;
}

/** The package name a node_modules directory holds by its path (`@scope/name`). */
function packageName(directory: string): string {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(directory)?.[1] ?? directory;
}

function readTextSync(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** One system call (hundreds of .bin entries are resolved on each verification). */
function realPath(file: string): string | undefined {
  try {
    return realpathSync.native(file);
  } catch {
    return undefined;
  }
}

function parsedObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function capped(found: PlantedFile[]): PlantedFile[] {
  if (found.length <= NAMED_AT_MOST) return found;
  return [
    ...found.slice(0, NAMED_AT_MOST),
    {
      file: 'node_modules',
      problem: `and ${found.length - NAMED_AT_MOST} more installed files differ from what the task's base was pinned with or package-lock.json lists. ${RESTORE}`,
    },
  ];
}
