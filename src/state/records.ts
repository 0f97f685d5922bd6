import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { assertTaskId } from '../core/task-id.js';
import { worktreeRelative } from '../repo/workspace.js';
import { removeLeftoverTempFiles, writeFileAtomically } from '../store/files.js';
import { artifactNames, storeDirectory, taskDirectory } from '../store/paths.js';
import { repositoryStateDirectory, taskStateDirectory } from './location.js';

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
export interface Tampering {
  file: string;
  entry: string;
  difference: string;
}

/** Files of a task that are server records (mirrored); `task_work_results.json` is the Player's own. */
const RECORD_NAME =
  /^(verdicts\.jsonl|review\.md|(player|coach)_turn_\d+\.json|runs\/[^/]+\.json)$/;

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

/** The baseline cache (per repository): `<state>/…/baseline-cache/<key>.json` ↔ `.guardkit/autobuild/.baseline-cache/`. */
export async function baselineCacheFile(worktree: string, key: string): Promise<MirroredFile> {
  const mirror = path.join(storeDirectory(worktree), '.baseline-cache', `${key}.json`);
  return {
    state: path.join(await repositoryStateDirectory(worktree), 'baseline-cache', `${key}.json`),
    mirror,
    display: worktreeRelative(worktree, mirror),
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
  await writeFileAtomically(file.state, content);
  await writeFileAtomically(file.mirror, content);
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

/** Every difference between a task's mirror and the server's copy (a missing mirror file included). */
export async function mirrorTampering(worktree: string, taskId: string): Promise<Tampering[]> {
  const stateNames = await stateRecordNames(worktree, taskId);
  const mirrorNames = await recordNames(taskDirectory(worktree, taskId));
  const findings: Tampering[] = [];
  for (const name of new Set([...stateNames, ...mirrorNames])) {
    const file = await taskRecordFile(worktree, taskId, name);
    const [server, mirror] = await Promise.all([readText(file.state), readText(file.mirror)]);
    if (server === mirror) continue;
    if (server === undefined)
      findings.push({
        file: file.display,
        entry: entryName(name),
        difference: 'not written by the server: it has no copy of this record',
      });
    else if (mirror === undefined)
      findings.push({
        file: file.display,
        entry: entryName(name),
        difference:
          'missing from the mirror (deleted, or a write was interrupted; the next record call restores it)',
      });
    else findings.push(...describeDifference(file.display, name, server, mirror));
  }
  return findings;
}

/**
 * Under the task lock: removes temp files a killed write left behind and rewrites every mirror file that
 * is missing or differs from the server's copy, so the mirror matches the state again.
 */
export async function repairMirror(worktree: string, taskId: string): Promise<void> {
  const stateDirectory = await taskStateDirectory(worktree, taskId);
  const mirrorDirectory = taskDirectory(worktree, taskId);
  for (const directory of [stateDirectory, mirrorDirectory]) {
    await removeLeftoverTempFiles(directory);
    await removeLeftoverTempFiles(path.join(directory, artifactNames.runsDirectory));
  }
  for (const name of await stateRecordNames(worktree, taskId)) {
    const file = await taskRecordFile(worktree, taskId, name);
    const server = await readText(file.state);
    if (server !== undefined && server !== (await readText(file.mirror)))
      await writeFileAtomically(file.mirror, server);
  }
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
  server: string,
  mirror: string,
): Tampering[] {
  if (name === artifactNames.verdictLog) return verdictLogDifferences(display, server, mirror);
  const entry = entryName(name);
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
