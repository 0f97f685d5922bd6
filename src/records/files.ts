import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { realStateRoot, stateRoot } from './state-directory.js';
import { readRegularFile } from '../repo/read-text.js';
import { jsonErrorOffset } from '../errors/json-error-offset.js';

/**
 * Whether `file` exists (links followed). Asked synchronously: a missing file is the common answer
 * (a run looks for python3 in every PATH directory), and fs/promises builds an error with a stack
 * for each one, about 30 µs, where existsSync makes the same access(2) call without one.
 */
export async function pathExists(file: string): Promise<boolean> {
  return existsSync(file);
}

export type JsonFile<T = unknown> =
  | { state: 'missing'; path: string }
  | { state: 'ok'; path: string; value: T }
  | { state: 'corrupt'; path: string; problem: string };

/** Marks coachgate's temp files, so a write killed half-way can be cleaned up by the next call. */
export const TEMP_MARK = '.coachgate-tmp-';

/**
 * Temp file + fsync + rename: a reader sees the old file or the new one, never half of one. Inside the
 * state directory or a worktree's `.guardkit/` or `.beads/`, no directory on the way and not the target
 * may be a symbolic link, and the real path must stay inside: a planted link never redirects a write.
 */
export async function writeFileAtomically(file: string, content: string): Promise<void> {
  const directory = path.dirname(file);
  await prepareWrite(file);
  const temp = path.join(
    directory,
    `.${path.basename(file)}${TEMP_MARK}${process.pid}-${randomBytes(4).toString('hex')}`,
  );
  const handle = await open(
    temp,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    isInsideState(file) ? 0o600 : 0o644,
  );
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw namingFile(error, file);
  }
  await handle.close();
  await rename(temp, file).catch(async (error: unknown) => {
    await unlink(temp).catch(() => undefined);
    throw error;
  });
}

/** A write through a handle names no file: name it, so a full disk is reported with its path. */
export function namingFile(error: unknown, file: string): unknown {
  const errno = error as NodeJS.ErrnoException;
  if (errno && typeof errno === 'object' && errno.code && !errno.path) errno.path = file;
  return error;
}

/** Removes temp files a killed write left in `directory` (the caller holds the lock that guards it). */
export async function removeLeftoverTempFiles(directory: string): Promise<string[]> {
  const names = (await readdir(directory).catch(() => [] as string[])).filter((name) =>
    name.includes(TEMP_MARK),
  );
  await Promise.all(names.map((name) => unlink(path.join(directory, name)).catch(() => undefined)));
  return names;
}

/**
 * What writeFileAtomically checks before it writes (directories made without following links, a linked
 * target refused), writing nothing: a caller that writes several files checks them all first.
 */
export async function prepareWrite(file: string): Promise<void> {
  const root = guardedRoot(file);
  if (root) {
    await makeDirectoriesNoFollow(root, path.dirname(file), file);
    await refuseLink(file, file);
  } else {
    await mkdir(path.dirname(file), { recursive: true });
  }
}

function isInsideState(file: string): boolean {
  return !path.relative(stateRoot(), file).startsWith('..');
}

/** The directory below which links are refused: the state root, or the worktree holding `.guardkit/`. */
/** Worktree directories coachgate writes into (its store; bead reviews for the coach-gate skill). */
const GUARDED_DIRECTORIES = ['.guardkit', '.beads'];

function guardedRoot(file: string): string | undefined {
  if (isInsideState(file)) return stateRoot();
  const index = Math.max(
    ...GUARDED_DIRECTORIES.map((name) => file.lastIndexOf(`${path.sep}${name}${path.sep}`)),
  );
  return index >= 0 ? file.slice(0, index) : undefined;
}

async function refuseLink(target: string, file: string): Promise<boolean> {
  const stat = await lstat(target).catch(() => undefined);
  if (stat?.isSymbolicLink()) {
    throw new CallerError(
      `Refusing to write ${file}: ${target} is a symbolic link.`,
      'Remove the link; coachgate writes its records only to real files inside the store.',
    );
  }
  return stat !== undefined;
}

async function makeDirectoriesNoFollow(
  root: string,
  directory: string,
  file: string,
): Promise<void> {
  const relative = path.relative(root, directory);
  if (relative.startsWith('..') || path.isAbsolute(relative))
    throw new CallerError(`Refusing to write ${file}: it is outside ${root}.`);
  // A record write never creates a worktree: one deleted meanwhile fails here instead of coming back.
  if (root === stateRoot()) await mkdir(root, { recursive: true, mode: 0o700 });
  else await stat(root);
  let current = root;
  for (const part of relative.split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    if (!(await refuseLink(current, file)))
      await mkdir(current, { mode: isInsideState(file) ? 0o700 : 0o755 }).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
        },
      );
  }
  const [realRoot, realDirectory] = await Promise.all([
    root === stateRoot() ? realStateRoot() : realpath(root),
    realpath(directory),
  ]);
  if (path.relative(realRoot, realDirectory).startsWith('..')) {
    throw new CallerError(
      `Refusing to write ${file}: its real directory ${realDirectory} is outside ${realRoot}.`,
    );
  }
}

export async function writeJsonAtomically(file: string, value: unknown): Promise<void> {
  await writeFileAtomically(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * Reads JSON, telling "missing" from "corrupt" (with line and column) — a broken record is never empty.
 * `read` is how the text is read (e.g. refusing links that leave a worktree): its refusal is "corrupt".
 */
export async function readJsonFile<T = unknown>(
  file: string,
  read: (file: string) => Promise<string> = readRegularFile,
): Promise<JsonFile<T>> {
  let text: string;
  try {
    text = await read(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'missing', path: file };
    return { state: 'corrupt', path: file, problem: `cannot read: ${(error as Error).message}` };
  }
  return parseJsonRecord(file, text);
}

/** Parses JSON text already read (e.g. the server's copy of a record); undefined text is "missing". */
export function parseJsonRecord<T = unknown>(file: string, text: string | undefined): JsonFile<T> {
  if (text === undefined) return { state: 'missing', path: file };
  const parsed = parseJsonText(text);
  return parsed.ok
    ? { state: 'ok', path: file, value: parsed.value as T }
    : { state: 'corrupt', path: file, problem: parsed.problem };
}

function parseJsonText(
  text: string,
): { ok: true; value: unknown } | { ok: false; problem: string } {
  if (text.trim() === '') return { ok: false, problem: 'file is empty (half-written?)' };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message);
    const offset = position ? Number(position[1]) : jsonErrorOffset(text);
    const { line, column } = lineAndColumn(text, offset);
    // V8 quotes the text around the error (`…, "root:x:0:0"... is not valid JSON`, or from `..."`
    // when the error is far in): a problem never repeats it, and stays on one line.
    const kind = message
      .split(/, (?:\.\.\.)?"/)[0]!
      .replace(/[\n\r\t]/g, (char) => JSON.stringify(char).slice(1, -1));
    return { ok: false, problem: `invalid JSON at line ${line}, column ${column}: ${kind}` };
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const end = offset < 0 ? text.length : offset;
  const before = text.slice(0, end);
  const line = before.split('\n').length;
  return { line, column: end - before.lastIndexOf('\n') };
}
