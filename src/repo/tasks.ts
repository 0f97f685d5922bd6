import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { parseTaskMarkdown, type TaskDocument } from '../tasks/task.js';
import { listAtCommit, readAtCommit } from './git.js';
import { MAX_TEXT_FILE_BYTES, UnreadableFileError } from './read-text.js';
import { readWorktreeFile } from './worktree-file.js';

export const TASK_DIRECTORIES = ['.guardkit/tasks', 'tasks'];

export interface LoadedTask extends TaskDocument {
  task_id: string;
  /** Worktree-relative path of the task file at the base commit. */
  path: string;
  base_commit: string;
  modified_in_worktree: boolean;
}

/**
 * Loads a task's requirements from the base commit: the contract both agents share, which the Player cannot
 * rewrite. The working copy is only compared, to report `modified_in_worktree`.
 */
export async function loadTask(
  worktree: string,
  taskId: string,
  baseCommit: string,
): Promise<LoadedTask> {
  const file = await findTaskFile(worktree, taskId, baseCommit);
  const text = (await readAtCommit(worktree, baseCommit, file).catch((error: unknown) => {
    throw error instanceof UnreadableFileError ? taskFileTooLarge(file, baseCommit) : error;
  }))!;
  const working = await readWorktreeFile(worktree, path.join(worktree, file)).catch(
    () => undefined,
  );
  return {
    ...parseTaskMarkdown(text, file),
    task_id: taskId,
    path: file,
    base_commit: baseCommit,
    modified_in_worktree: working !== text,
  };
}

/** A task file over the read limit: refused whole, so no answer carries megabytes of requirements. */
function taskFileTooLarge(file: string, baseCommit: string): CallerError {
  return new CallerError(
    `The task file ${file} at the base commit ${baseCommit.slice(0, 12)} is over the ${MAX_TEXT_FILE_BYTES / 1024 / 1024} MiB coachgate reads; the task is not loaded.`,
    'Keep the task file to its requirements and acceptance criteria, commit the smaller file on the base branch, and re-pin the task (coachgate task pin-base) if it was pinned before.',
  );
}

/** `<ID>.md` or `<ID>-<slug>.md` under the task directories, as committed at the base. */
export async function findTaskFile(
  worktree: string,
  taskId: string,
  baseCommit: string,
): Promise<string> {
  const candidates = (await listAtCommit(worktree, baseCommit, TASK_DIRECTORIES)).filter((file) =>
    namesTask(path.posix.basename(file), taskId),
  );
  if (candidates.length === 1) return candidates[0]!;
  if (candidates.length > 1) {
    const exact = [];
    for (const file of candidates) {
      const text = await readAtCommit(worktree, baseCommit, file);
      if (text !== undefined && parseTaskMarkdown(text, file).id === taskId) exact.push(file);
    }
    if (exact.length === 1) return exact[0]!;
    throw new CallerError(
      `Several task files match ${taskId}: ${candidates.join(', ')}.`,
      'Keep one file per task id (the front matter `id` decides).',
    );
  }
  const inWorktree = await findInWorkingTree(worktree, taskId);
  if (inWorktree)
    throw new CallerError(
      `Task ${taskId} exists only in the working tree (${inWorktree}), not at the base commit ${baseCommit.slice(0, 12)}.`,
      'Requirements are read from the base commit so the Player cannot change them: commit the task file on the base branch first.',
    );
  const known = await listTaskIds(worktree);
  throw new CallerError(
    `No task file for ${taskId} under ${TASK_DIRECTORIES.join(' or ')} at the base commit ${baseCommit.slice(0, 12)}.`,
    `${known.length > 0 ? `Known tasks: ${listed(known)}. ` : ''}To add it: coachgate task new --id ${taskId} --title TEXT --criterion TEXT (or create ${TASK_DIRECTORIES[0]}/backlog/${taskId}.md with front matter + "## Acceptance Criteria" and commit it).`,
    { valid_task_ids: known },
  );
}

/** Most task ids a refusal lists; the rest are counted. */
const LISTED_IDS = 30;

function listed(ids: string[]): string {
  const more = ids.length > LISTED_IDS ? ` and ${ids.length - LISTED_IDS} more` : '';
  return `${ids.slice(0, LISTED_IDS).join(', ')}${more}`;
}

function namesTask(fileName: string, taskId: string): boolean {
  if (!fileName.endsWith('.md') || !fileName.startsWith(taskId)) return false;
  const next = fileName.charAt(taskId.length);
  return next === '.' || next === '-' || next === '_' || next === ' ';
}

async function findInWorkingTree(worktree: string, taskId: string): Promise<string | undefined> {
  for (const directory of TASK_DIRECTORIES) {
    const entries = await readdir(path.join(worktree, directory), { recursive: true }).catch(
      () => [] as string[],
    );
    const match = entries.find((entry) => namesTask(path.basename(entry), taskId));
    if (match) return path.posix.join(directory, match.split(path.sep).join('/'));
  }
  return undefined;
}

/** Most task files read when listing ids (completions must answer quickly even in a huge backlog). */
const MAX_LISTED_TASK_FILES = 2_000;

/** Task ids in the working tree's task directories (front matter `id`, else the file name), sorted. */
export async function listTaskIds(worktree: string): Promise<string[]> {
  const ids = new Set<string>();
  for (const directory of TASK_DIRECTORIES) {
    const entries = await readdir(path.join(worktree, directory), { recursive: true }).catch(
      () => [] as string[],
    );
    for (const entry of entries
      .filter((name) => name.endsWith('.md'))
      .slice(0, MAX_LISTED_TASK_FILES)) {
      const relative = path.posix.join(directory, entry.split(path.sep).join('/'));
      const text = await readWorktreeFile(
        worktree,
        path.join(worktree, relative),
        256 * 1024,
      ).catch(() => undefined);
      const fromFile = /^([A-Za-z]+-[A-Za-z0-9]+(?:-\d+)?)/.exec(path.basename(entry))?.[1];
      const id = (text === undefined ? undefined : safeId(text, relative)) ?? fromFile;
      if (id) ids.add(id);
    }
  }
  return [...ids].sort();
}

function safeId(text: string, file: string): string | undefined {
  try {
    return parseTaskMarkdown(text, file).id;
  } catch {
    return undefined;
  }
}
