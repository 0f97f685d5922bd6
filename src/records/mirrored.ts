import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { assertTaskId } from '../tasks/task-id.js';
import { worktreeRelative } from '../repo/workspace.js';
import { WORKTREES_DIRECTORY } from '../repo/worktrees.js';
import { pathExists, prepareWrite, removeLeftoverTempFiles, writeFileAtomically } from './files.js';
import { artifactNames, storeDirectory, taskDirectory } from './mirror-paths.js';
import { repositoryStateDirectory, taskStateDirectory } from './state-directory.js';

/**
 * A record kept twice: the authoritative copy in the state directory and the GuardKit-compatible mirror in
 * `.guardkit/autobuild/`, which travels with the branch. Decisions read `state`; `mirror` is compared.
 */
export interface MirroredFile {
  state: string;
  mirror: string;
  /** How reports name the file: worktree-relative mirror path. */
  display: string;
}

/** A difference between the mirror and the server's copy: which file, which entry, what differs. */
export const TamperingSchema = z.object({
  file: z.string(),
  entry: z.string(),
  difference: z.string(),
});
export type Tampering = z.infer<typeof TamperingSchema>;

/** Files of a task that are server records (mirrored); `task_work_results.json` is the Player's own. */
const RECORD_NAME =
  /^(verdicts\.jsonl|verdicts-head\.json|review\.md|merged\.json|(player|coach)_turn_\d+\.json|runs\/[^/]+\.json)$/;

export async function taskRecordFile(
  worktree: string,
  taskId: string,
  name: string,
): Promise<MirroredFile> {
  const mirror = path.join(taskDirectory(worktree, taskId), name);
  return {
    state: path.join(await taskStateDirectory(worktree, taskId), name),
    mirror,
    display: worktreeRelative(worktree, mirror),
  };
}

/**
 * Repository-wide caches of base-commit results, mirrored beside the task directories: the test baseline
 * (`compare_baseline`, trusted evaluation) and the toolchain gates' base findings.
 */
const CACHE_DIRECTORIES = { baseline: '.baseline-cache', gate: '.gate-baseline-cache' } as const;
export type CacheName = keyof typeof CACHE_DIRECTORIES;

/** `<state>/…/<cache>/<key>.json` ↔ `.guardkit/autobuild/.<cache>/<key>.json`. */
export async function mirroredCacheFile(
  worktree: string,
  cache: CacheName,
  key: string,
): Promise<MirroredFile> {
  const directories = await cacheDirectories(worktree, cache);
  const mirror = path.join(directories.mirror, `${key}.json`);
  return {
    state: path.join(directories.state, `${key}.json`),
    mirror,
    display: worktreeRelative(worktree, mirror),
  };
}

async function cacheDirectories(worktree: string, cache: CacheName) {
  const mirrorName = CACHE_DIRECTORIES[cache];
  return {
    state: path.join(await repositoryStateDirectory(worktree), mirrorName.slice(1)),
    mirror: path.join(storeDirectory(worktree), mirrorName),
  };
}

/** The server's copy, or undefined when the server never wrote it. */
export async function readStateCopy(file: MirroredFile): Promise<string | undefined> {
  return readText(file.state);
}

/**
 * State first, then the mirror, each atomically: a crash between the two leaves a record the mirror lacks,
 * which the next locked call repairs. The caller holds the task lock (or, for the cache, owns the key).
 */
export async function writeMirrored(file: MirroredFile, content: string): Promise<void> {
  await assertWritable(file);
  await writeFileAtomically(file.state, content);
  await writeFileAtomically(file.mirror, content);
}

/**
 * Refuses (CallerError) before anything is written when a copy of any file could not be written, e.g.
 * a mirror path that is a symbolic link: a refused call must not leave a record the mirror lacks.
 */
export async function assertWritable(...files: MirroredFile[]): Promise<void> {
  for (const file of files) {
    await prepareWrite(file.state);
    await prepareWrite(file.mirror);
  }
}

/** Names (relative to the task's state directory) of the server's records for a task, sorted. */
export async function stateRecordNames(worktree: string, taskId: string): Promise<string[]> {
  return recordNames(await taskStateDirectory(worktree, assertTaskId(taskId)));
}

async function recordNames(directory: string): Promise<string[]> {
  const top = await readdir(directory).catch(() => [] as string[]);
  const runs = (
    await readdir(path.join(directory, artifactNames.runsDirectory)).catch(() => [] as string[])
  ).map((name) => `${artifactNames.runsDirectory}/${name}`);
  return [...top, ...runs].filter((name) => RECORD_NAME.test(name)).sort();
}

/**
 * Every difference between the worktree mirror and the server's copy that a decision about the task could
 * rest on: the task's records (a missing mirror file included) and the repository's base-result caches.
 */
export async function mirrorTampering(worktree: string, taskId: string): Promise<Tampering[]> {
  return [
    ...(await taskTampering(await mirrorRoot(worktree, taskId), taskId)),
    ...(await cacheTampering(worktree)),
  ];
}

/**
 * Where the task's mirror is: in `worktree`, unless it has none there and the task's own worktree
 * (`.guardkit/worktrees/<TASK>`) is inside it, where the loop wrote it. Compared there, a look from
 * the main checkout reports a real difference, not every record as missing.
 */
async function mirrorRoot(worktree: string, taskId: string): Promise<string> {
  if (await pathExists(taskDirectory(worktree, taskId))) return worktree;
  const own = path.join(worktree, WORKTREES_DIRECTORY, taskId);
  return (await pathExists(path.join(own, '.git'))) ? own : worktree;
}

/** `<file> <entry>: <difference>`, the one way every report names a finding. */
export function describeTampering(finding: Tampering): string {
  return `${finding.file} ${finding.entry}: ${finding.difference}`;
}

/**
 * A markdown section naming every finding, for the resources and prompts that show records; empty when
 * the mirror matches.
 */
export function tamperingSection(findings: Tampering[]): string {
  if (findings.length === 0) return '';
  return [
    '## Mirror tampered',
    '',
    "The worktree mirror under .guardkit/autobuild/ differs from the server's own copy, which every " +
      'decision reads (and which is shown here). The next record call restores the mirror; an approval ' +
      'attempted while it differs is refused. Find out who edited it:',
    ...findings.map((finding) => `- ${describeTampering(finding)}`),
  ].join('\n');
}

async function taskTampering(worktree: string, taskId: string): Promise<Tampering[]> {
  const stateNames = await stateRecordNames(worktree, taskId);
  const mirrorNames = await recordNames(taskDirectory(worktree, taskId));
  const findings: Tampering[] = [];
  for (const name of new Set([...stateNames, ...mirrorNames])) {
    const file = await taskRecordFile(worktree, taskId, name);
    findings.push(...(await compareCopies(file, name, entryName(name), 'all')));
  }
  return findings;
}

/**
 * Entries whose mirror differs from the server's copy. A cache is shared by every worktree of the
 * repository while each worktree (and each clone, from the branch) has its own mirror, so an entry only
 * one side has is normal and harmless: the server never reads the mirror, and computes what it lacks.
 */
async function cacheTampering(worktree: string): Promise<Tampering[]> {
  const findings: Tampering[] = [];
  for (const cache of Object.keys(CACHE_DIRECTORIES) as CacheName[]) {
    const directories = await cacheDirectories(worktree, cache);
    const names = new Set([
      ...(await cacheKeys(directories.state)),
      ...(await cacheKeys(directories.mirror)),
    ]);
    for (const key of [...names].sort()) {
      const file = await mirroredCacheFile(worktree, cache, key);
      const entry = `${cache} cache entry ${key}`;
      findings.push(...(await compareCopies(file, `${key}.json`, entry, 'differing')));
    }
  }
  return findings;
}

async function cacheKeys(directory: string): Promise<string[]> {
  return (await readdir(directory).catch(() => [] as string[]))
    .filter((name) => name.endsWith('.json') && !name.startsWith('.'))
    .map((name) => path.basename(name, '.json'));
}

async function compareCopies(
  file: MirroredFile,
  name: string,
  entry: string,
  report: 'all' | 'differing',
): Promise<Tampering[]> {
  const [server, mirror] = await Promise.all([readText(file.state), readText(file.mirror)]);
  if (server === mirror) return [];
  if (report === 'differing' && (server === undefined || mirror === undefined)) return [];
  if (server === undefined)
    return [
      {
        file: file.display,
        entry,
        difference: 'not written by the server: it has no copy of this record',
      },
    ];
  if (mirror === undefined)
    return [
      {
        file: file.display,
        entry,
        difference:
          'missing from the mirror (deleted, or a write was interrupted; the next record call restores it)',
      },
    ];
  return describeDifference(file.display, name, entry, server, mirror);
}

/**
 * Under the task lock: removes temp files a killed write left behind and rewrites every mirror file that
 * is missing or differs from the server's copy, so the mirror matches the state again. Cache entries this
 * worktree's mirror never had stay absent (see cacheTampering).
 */
export async function repairMirror(worktree: string, taskId: string): Promise<void> {
  const stateDirectory = await taskStateDirectory(worktree, taskId);
  const mirrorDirectory = taskDirectory(worktree, taskId);
  for (const directory of [stateDirectory, mirrorDirectory]) {
    await removeLeftoverTempFiles(directory);
    await removeLeftoverTempFiles(path.join(directory, artifactNames.runsDirectory));
  }
  for (const name of await stateRecordNames(worktree, taskId))
    await restoreMirror(await taskRecordFile(worktree, taskId, name), 'always');
  for (const cache of Object.keys(CACHE_DIRECTORIES) as CacheName[]) {
    for (const key of await cacheKeys((await cacheDirectories(worktree, cache)).state))
      await restoreMirror(await mirroredCacheFile(worktree, cache, key), 'when present');
  }
}

async function restoreMirror(file: MirroredFile, when: 'always' | 'when present'): Promise<void> {
  const [server, mirror] = await Promise.all([readText(file.state), readText(file.mirror)]);
  if (server === undefined || server === mirror) return;
  if (mirror === undefined && when === 'when present') return;
  await writeFileAtomically(file.mirror, server);
}

function entryName(name: string): string {
  const turn = /^(player|coach)_turn_(\d+)\.json$/.exec(name);
  if (turn) return `${turn[1]} turn ${turn[2]}`;
  if (name.startsWith(`${artifactNames.runsDirectory}/`))
    return `run ${path.basename(name, '.json')}`;
  return 'whole file';
}

function describeDifference(
  display: string,
  name: string,
  entry: string,
  server: string,
  mirror: string,
): Tampering[] {
  if (name === artifactNames.verdictLog) return verdictLogDifferences(display, server, mirror);
  const fields = jsonFieldDifferences(server, mirror);
  return [{ file: display, entry, difference: fields ?? 'the text differs from the server copy' }];
}

function verdictLogDifferences(display: string, server: string, mirror: string): Tampering[] {
  const serverLines = server.split('\n').filter(Boolean);
  const mirrorLines = mirror.split('\n').filter(Boolean);
  const findings: Tampering[] = [];
  for (let index = 0; index < Math.max(serverLines.length, mirrorLines.length); index++) {
    const [ours, theirs] = [serverLines[index], mirrorLines[index]];
    if (ours === theirs) continue;
    const entry = `line ${index + 1} (seq ${index + 1})`;
    if (ours === undefined)
      findings.push({ file: display, entry, difference: 'an entry the server never wrote' });
    else if (theirs === undefined)
      findings.push({ file: display, entry, difference: 'missing from the mirror' });
    else
      findings.push({
        file: display,
        entry,
        difference: jsonFieldDifferences(ours, theirs) ?? 'the line differs',
      });
  }
  return findings;
}

/** "field status: server "failed", mirror "passed"; …" for JSON objects; null when not both objects. */
function jsonFieldDifferences(server: string, mirror: string): string | null {
  let ours: Record<string, unknown>;
  let theirs: Record<string, unknown>;
  try {
    [ours, theirs] = [JSON.parse(server), JSON.parse(mirror)];
  } catch {
    return null;
  }
  if (!isObject(ours) || !isObject(theirs)) return null;
  const keys = [...new Set([...Object.keys(ours), ...Object.keys(theirs)])].filter(
    (key) => JSON.stringify(ours[key]) !== JSON.stringify(theirs[key]),
  );
  if (keys.length === 0) return 'the formatting differs';
  return keys
    .slice(0, 5)
    .map((key) => `field ${key}: server ${short(ours[key])}, mirror ${short(theirs[key])}`)
    .join('; ');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function short(value: unknown): string {
  const text = value === undefined ? 'absent' : JSON.stringify(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
