import { isBinEntry, isOutOfScope, packageDirectory } from '../repo/node-modules.js';
import { publishedTarball, type PublishedTarball } from '../repo/npm-cache.js';
import type { PlantedFile } from './planted-file.js';

/** An entry of package-lock.json's `packages`, as this check reads it. */
export interface LockedPackage {
  version?: string;
  integrity?: string;
  inBundle?: boolean;
  hasInstallScript?: boolean;
  link?: boolean;
}

/** An installed package nothing could compare with what its registry publishes. */
export interface UnverifiedPackage {
  /** Its node_modules directory (`node_modules/@s/b`). */
  package: string;
  why: string;
}

export interface PublishedCheck {
  planted: PlantedFile[];
  unverified: UnverifiedPackage[];
}

/** What the check reads: the installed tree, the locks that name each package's tarball. */
export interface InstalledPackages {
  /** nodeModulesContent: path to sha256, or `link:<target>`. */
  content: Record<string, string>;
  /** Each installed package's directory, at a place npm installs to, with its `version`. */
  versions: Map<string, string | undefined>;
  /** package-lock.json (or yarn.lock) at the base commit: the integrity each tarball must hash to. */
  baseLock?: Map<string, LockedPackage>;
  /** The worktree's package-lock.json: packages the Player added or moved to another version. */
  worktreeLock?: Map<string, LockedPackage>;
  /** npm's content-addressed cache (`<cache>/_cacache`). */
  cache: string;
}

const RESTORE = 'Restore it (npm ci)';

/**
 * Every installed package compared with the tarball its registry published, read offline from npm's
 * cache under the integrity package-lock.json records for it: a file the tarball lacks, holds with
 * other content, or holds and the install lacks is planted, whenever it got there (before the pin
 * too). The integrity comes from the base's lock for the version the base locks (the worktree's
 * lock and npm's cache are the Player's to write: a tarball they forge cannot hash to the base's
 * sha512), and from the worktree's lock for a version the Player installed (their dependency, as
 * their code is). A package with no strong integrity or no cached tarball is unverified.
 */
export async function publishedPackages(installed: InstalledPackages): Promise<PublishedCheck> {
  const locked = lockedEntries(installed);
  const tarballs = new Map<string, PublishedTarball>();
  await Promise.all(
    [...locked].map(async ([directory, entry]) => {
      if (entry.integrity)
        tarballs.set(directory, await publishedTarball(installed.cache, entry.integrity));
    }),
  );
  const compared = compareInstalled(installed.content, locked, tarballs);
  return {
    planted: [...compared.planted, ...missingFiles(locked, tarballs, compared.seen)],
    unverified: unverifiedOf(installed.versions, locked, tarballs, compared.scripted),
  };
}

/** Each installed file against its package's tarball: the planted ones, and what was seen. */
function compareInstalled(
  content: Record<string, string>,
  locked: Map<string, LockedPackage>,
  tarballs: Map<string, PublishedTarball>,
): { planted: PlantedFile[]; seen: Map<string, Set<string>>; scripted: Map<string, string[]> } {
  const published = new Set(
    [...tarballs.values()].flatMap((item) => (item.state === 'ok' ? [...item.files.values()] : [])),
  );
  const owner = ownerOf(locked);
  const result = { planted: [] as PlantedFile[], seen: new Map(), scripted: new Map() };
  for (const [file, digest] of Object.entries(content)) {
    const directory = owner(file);
    const tarball = directory ? tarballs.get(directory) : undefined;
    if (!directory || tarball?.state !== 'ok') continue;
    const inner = file.slice(directory.length + 1);
    result.seen.set(directory, (result.seen.get(directory) ?? new Set()).add(inner));
    const expected = tarball.files.get(inner);
    // A command npm links is judged by where it links (node-modules-integrity.ts).
    if (isBinEntry(file) || expected === digest) continue;
    // An install script writes what its package builds or copies (esbuild links its platform's
    // binary): published content anywhere passes; anything else it added cannot be verified.
    if (locked.get(directory)!.hasInstallScript) {
      if (published.has(digest)) continue;
      if (expected === undefined) {
        result.scripted.set(directory, [...(result.scripted.get(directory) ?? []), inner]);
        continue;
      }
    }
    const name = nameAt(directory, locked);
    result.planted.push({ file, problem: fileProblem(name, digest, expected) });
  }
  return result;
}

/** Files a tarball holds that the install lacks (tool caches the walk leaves out excepted). */
function missingFiles(
  locked: Map<string, LockedPackage>,
  tarballs: Map<string, PublishedTarball>,
  seen: Map<string, Set<string>>,
): PlantedFile[] {
  const planted: PlantedFile[] = [];
  for (const [directory, tarball] of tarballs) {
    if (tarball.state !== 'ok') continue;
    const present = seen.get(directory) ?? new Set();
    for (const inner of tarball.files.keys()) {
      const file = `${directory}/${inner}`;
      if (present.has(inner) || isOutOfScope(file)) continue;
      planted.push({
        file,
        problem: `a file of ${nameAt(directory, locked)} its published tarball holds is missing from the install (removed or replaced by a link). ${RESTORE}`,
      });
    }
  }
  return planted;
}

/** `name@version` of the package installed at a directory, as its lock entry says. */
function nameAt(directory: string, locked: Map<string, LockedPackage>): string {
  return `${packageNameOf(directory)}@${locked.get(directory)?.version ?? '?'}`;
}

function fileProblem(name: string, digest: string, expected: string | undefined): string {
  if (digest.startsWith('link:'))
    return `a link inside ${name}, whose published tarball holds no links. ${RESTORE}`;
  return expected === undefined
    ? `a file inside ${name} that its published tarball does not hold: code in the test process that npm did not install. ${RESTORE}`
    : `a file of ${name} that differs from its published tarball (edited after install): code in the test process is not the package its registry publishes. ${RESTORE}`;
}

/**
 * The lock entry each installed package is judged against: the base's when it locks the installed
 * version there, else the worktree's when it does. Bundled packages ship in their parent's tarball.
 */
function lockedEntries(installed: InstalledPackages): Map<string, LockedPackage> {
  const locked = new Map<string, LockedPackage>();
  for (const [directory, version] of installed.versions) {
    const entry = [installed.baseLock, installed.worktreeLock]
      .map((lock) => lock?.get(directory))
      .find((item) => item !== undefined && item.version === version);
    if (entry && !entry.link) locked.set(directory, entry);
  }
  return locked;
}

/**
 * The package whose tarball a file came from: its own directory, or, for a package bundled in
 * another's tarball or a node_modules that ships inside one (`pnpm/dist/node_modules`), the nearest
 * enclosing package npm installed from a tarball.
 */
function ownerOf(locked: Map<string, LockedPackage>): (file: string) => string | undefined {
  return (file) => {
    let directory = packageDirectory(file);
    while (directory && (!locked.has(directory) || locked.get(directory)!.inBundle))
      directory = packageDirectory(directory);
    return directory;
  };
}

function unverifiedOf(
  versions: Map<string, string | undefined>,
  locked: Map<string, LockedPackage>,
  tarballs: Map<string, PublishedTarball>,
  scripted: Map<string, string[]>,
): UnverifiedPackage[] {
  const unverified: UnverifiedPackage[] = [];
  for (const directory of versions.keys())
    if (!locked.has(directory))
      unverified.push({
        package: directory,
        why: 'no lock (package-lock.json, yarn.lock) lists it at its installed version',
      });
  for (const [directory, entry] of locked) {
    if (entry.inBundle) continue;
    const tarball = tarballs.get(directory);
    const why = !entry.integrity
      ? 'its lock gives it no integrity (a git, file or tarball URL dependency)'
      : tarball?.state === 'weak'
        ? 'its lock gives only a sha1 integrity, which does not bind the content'
        : tarball?.state === 'missing'
          ? "npm's cache holds no tarball under its integrity (installed elsewhere, or the cache was cleaned)"
          : tarball?.state === 'altered'
            ? "the tarball npm's cache holds under its integrity does not hash to it"
            : tarball?.state === 'unreadable'
              ? "the tarball npm's cache holds under its integrity is not a readable gzipped tar"
              : undefined;
    if (why) unverified.push({ package: directory, why });
    const written = scripted.get(directory);
    if (written)
      unverified.push({
        package: directory,
        why: `its install script wrote files no published tarball holds (${written.slice(0, 3).join(', ')}${written.length > 3 ? ', …' : ''})`,
      });
  }
  return unverified;
}

function packageNameOf(directory: string): string {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)$/.exec(directory)?.[1] ?? directory;
}
