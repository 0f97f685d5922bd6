import { createHash } from 'node:crypto';
import { readdir, readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import { fileDigest } from '../repo/file-digest.js';
import { installedRecords } from '../repo/runner-loaded.js';
import { publishedWheels } from '../repo/wheel-sources.js';
import { zipMember, zipNames } from '../repo/zip-entries.js';
import { EDITED_INSTALL, type PlantedFile } from './planted-file.js';

/** Files pip writes into a distribution's `.dist-info` at install: in no published wheel. */
const WRITTEN_AT_INSTALL = new Set(['INSTALLER', 'REQUESTED', 'direct_url.json', 'RECORD']);

/** A wheel's RECORD (path to sha256), by the wheel's path: one unzip per server process. */
const wheelRecords = new Map<string, Promise<Map<string, string> | undefined>>();

/**
 * Every distribution of the project's virtualenvs compared with the wheel its index published, as
 * pip would find it offline (repo/wheel-sources.ts): the installed RECORD is written at install, so
 * a file edited in place with its RECORD line rewritten, or added and listed there, only shows
 * against the wheel's own RECORD. A file the wheel lists with another sha256, or does not list, is
 * planted. An editable install is the project's own code; a distribution with no published wheel
 * found keeps the RECORD check alone.
 */
export async function publishedDistributions(worktree: string): Promise<PlantedFile[]> {
  const root = await realpath(worktree);
  const planted: PlantedFile[] = [];
  for (const record of await installedRecords(worktree)) {
    const distInfo = path.posix.dirname(record);
    const match = /^(.+)-([^-]+)\.dist-info$/.exec(path.posix.basename(distInfo));
    if (!match || (await editable(path.join(worktree, distInfo)))) continue;
    const [, name, version] = match as unknown as [string, string, string];
    const virtualenv = path.join(worktree, distInfo.split('/')[0]!);
    const wheels = (await publishedWheels(name, version, virtualenv)).filter(
      (wheel) => !wheel.file.startsWith(root + path.sep),
    );
    let published: Map<string, string> | undefined;
    for (const wheel of wheels) published ??= await wheelRecord(wheel.file, wheel.sha256);
    if (published)
      planted.push(...(await differences(worktree, record, published, `${name} ${version}`)));
  }
  return planted;
}

/** Installed files that differ from the published wheel's RECORD, or that it does not list. */
async function differences(
  worktree: string,
  record: string,
  published: Map<string, string>,
  distribution: string,
): Promise<PlantedFile[]> {
  const site = path.posix.dirname(path.posix.dirname(record));
  const restore = `Restore it (pip install --force-reinstall ${distribution.replace(' ', '==')})`;
  const found: PlantedFile[] = [];
  for (const [file, digest] of published) {
    const installed = await fileDigest(path.join(worktree, site, file));
    if (installed === digest) continue;
    found.push({
      file: `${site}/${file}`,
      problem:
        installed === undefined
          ? `${EDITED_INSTALL} ${distribution} is missing: its published wheel holds it. ${restore}`
          : `${EDITED_INSTALL} ${distribution} differs from its published wheel (edited after install, RECORD or not): code in the test process is not the distribution its index publishes. ${restore}`,
    });
  }
  // The installed RECORD's files, and every file of the .dist-info (an entry point added there
  // registers a plugin without a RECORD line).
  const distInfo = path.posix.dirname(record);
  const metadata = await readdir(path.join(worktree, distInfo), { recursive: true }).catch(
    () => [] as string[],
  );
  const listed = new Set([
    ...recordPaths(await readFile(path.join(worktree, record), 'utf8')),
    ...metadata.map((file) => `${path.posix.basename(distInfo)}/${file.split(path.sep).join('/')}`),
  ]);
  for (const file of listed) {
    if (published.has(file) || !listedByPip(file)) continue;
    if ((await fileDigest(path.join(worktree, site, file))) === undefined) continue;
    found.push({
      file: `${site}/${file}`,
      problem: `${EDITED_INSTALL} ${distribution} (in its RECORD or its .dist-info) that its published wheel does not hold: code or metadata pip did not install. ${restore}`,
    });
  }
  return found;
}

/**
 * Whether pip installs this RECORD path from the wheel itself: not bytecode it compiles, not its
 * own `.dist-info` files, and not the scripts and data it moves out of site-packages (`../`).
 */
function listedByPip(file: string): boolean {
  const [top, name] = file.split('/');
  if (top?.endsWith('.dist-info') && name && WRITTEN_AT_INSTALL.has(name)) return false;
  return !file.startsWith('../') && !file.includes('/__pycache__/') && !file.endsWith('.pyc');
}

/** The paths of a RECORD (CSV: path, hash, size; a path with a comma is quoted). */
function recordPaths(text: string): string[] {
  return text
    .split('\n')
    .map((line) => /^"((?:[^"]|"")*)",/.exec(line)?.[1]?.replace(/""/g, '"') ?? line.split(',')[0])
    .filter((file): file is string => !!file);
}

/** Whether pip installed the distribution editable (PEP 610 `direct_url.json`): the project's own. */
async function editable(distInfo: string): Promise<boolean> {
  const text = await readFile(path.join(distInfo, 'direct_url.json'), 'utf8').catch(() => '');
  try {
    return (JSON.parse(text) as { dir_info?: { editable?: boolean } }).dir_info?.editable === true;
  } catch {
    return false;
  }
}

/**
 * A wheel's RECORD, each listed file with its sha256 (urlsafe base64): only when the wheel hashes to
 * what its index publishes for it, when the index says.
 */
function wheelRecord(file: string, sha256?: string): Promise<Map<string, string> | undefined> {
  const key = `${file}\n${sha256 ?? ''}`;
  let known = wheelRecords.get(key);
  if (!known) {
    known = (async () => {
      const bytes = await readFile(file).catch(() => undefined);
      if (!bytes) return undefined;
      if (sha256 && createHash('sha256').update(bytes).digest('hex') !== sha256) return undefined;
      const name = zipNames(bytes).find((item) => /^[^/]+\.dist-info\/RECORD$/.test(item));
      const text = name ? zipMember(bytes, name)?.toString('utf8') : undefined;
      if (!text) return undefined;
      const record = new Map<string, string>();
      for (const line of text.split('\n')) {
        const match = /^(?:"((?:[^"]|"")*)"|([^,]+)),sha256=([A-Za-z0-9_-]+),/.exec(line);
        const path = match?.[1]?.replace(/""/g, '"') ?? match?.[2];
        if (path && match && !path.includes('.data/')) record.set(path, match[3]!);
      }
      return record;
    })();
    wheelRecords.set(key, known);
  }
  return known;
}
