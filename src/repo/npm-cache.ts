import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { readJsonFile, writeFileAtomically } from '../records/files.js';
import { ensurePrivateDirectory, stateRoot } from '../records/state-directory.js';
import { tarFileDigests } from './tar-entries.js';

/** Algorithms whose digest nobody can forge a second content for (npm's sha1 is not one). */
const STRONG = ['sha512', 'sha384', 'sha256'];

/** What npm's cache holds for one integrity. */
export type PublishedTarball =
  | { state: 'ok'; files: Map<string, string> }
  | { state: 'missing' | 'weak' | 'altered' | 'unreadable' };

/** Tarballs read, by integrity: one gunzip per package and server process. */
const tarballs = new Map<string, Promise<PublishedTarball>>();

/**
 * npm's content-addressed cache (cacache), as npm finds it: `npm_config_cache`, else the `cache`
 * setting of the user's .npmrc, else ~/.npm; the content lives in its `_cacache`.
 */
export async function npmCacheDirectory(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const configured = env.npm_config_cache ?? env.NPM_CONFIG_CACHE;
  if (configured) return path.join(configured, '_cacache');
  const npmrc = await readFile(path.join(os.homedir(), '.npmrc'), 'utf8').catch(() => '');
  const setting = /^\s*cache\s*=\s*(.+?)\s*$/m.exec(npmrc)?.[1];
  const cache = setting?.replace(/^~(?=\/|$)/, os.homedir()) ?? path.join(os.homedir(), '.npm');
  return path.join(cache, '_cacache');
}

/**
 * The files of the tarball npm's cache holds under `integrity` (a package-lock.json `integrity`:
 * Subresource Integrity, `sha512-<base64>`), each path with the first component stripped (npm
 * extracts `package/lib/x.js` to `lib/x.js`) to its sha256. Read only when the cached bytes hash to
 * that integrity: cacache files by digest, and the digest is checked here, not trusted. Kept in the
 * server's state directory by that digest once read.
 */
export function publishedTarball(cache: string, integrity: string): Promise<PublishedTarball> {
  const key = `${cache}\n${integrity}`;
  let known = tarballs.get(key);
  if (!known) {
    known = readTarball(cache, integrity);
    tarballs.set(key, known);
  }
  return known;
}

/** The strongest hash of a Subresource Integrity string nobody can forge (not sha1), if any. */
export function strongestHash(integrity: string): string | undefined {
  return STRONG.map((algorithm) =>
    integrity.split(/\s+/).find((hash) => hash.startsWith(`${algorithm}-`)),
  ).find(Boolean);
}

async function readTarball(cache: string, integrity: string): Promise<PublishedTarball> {
  const strongest = strongestHash(integrity);
  if (!strongest) return { state: 'weak' };
  const algorithm = strongest.slice(0, strongest.indexOf('-'));
  const expected = Buffer.from(strongest.slice(algorithm.length + 1), 'base64');
  const hex = expected.toString('hex');
  const listing = path.join(stateRoot(), 'published', 'npm', `${algorithm}-${hex}.json`);
  const kept = await readJsonFile<Record<string, string>>(listing);
  if (kept.state === 'ok') return { state: 'ok', files: new Map(Object.entries(kept.value)) };
  const content = path.join(cache, 'content-v2', algorithm, hex.slice(0, 2), hex.slice(2, 4));
  const bytes = await readFile(path.join(content, hex.slice(4))).catch(() => undefined);
  if (!bytes) return { state: 'missing' };
  if (!createHash(algorithm).update(bytes).digest().equals(expected)) return { state: 'altered' };
  let files: Map<string, string>;
  try {
    files = extractedDigests(gunzipSync(bytes));
  } catch {
    return { state: 'unreadable' };
  }
  await keep(listing, files);
  return { state: 'ok', files };
}

/** Each file as npm extracts it (the first path component stripped) to its sha256. */
function extractedDigests(archive: Buffer): Map<string, string> {
  const files = new Map<string, string>();
  for (const [name, digest] of tarFileDigests(archive)) {
    const parts = path.posix.normalize(name.replace(/^\.?\/+/, '')).split('/');
    const inner = parts.slice(1).join('/');
    if (inner && !inner.startsWith('..')) files.set(inner, digest);
  }
  return files;
}

/**
 * A verified tarball's listing, kept in the state directory by its digest: what a registry published
 * under an integrity never changes, so a later server reads it without the tarball (or after npm's
 * cache was cleaned). A state directory that cannot be written only costs the next read.
 */
async function keep(listing: string, files: Map<string, string>): Promise<void> {
  try {
    await ensurePrivateDirectory(path.dirname(listing));
    await writeFileAtomically(listing, JSON.stringify(Object.fromEntries(files)));
  } catch {
    // Read from the tarball again next time.
  }
}
