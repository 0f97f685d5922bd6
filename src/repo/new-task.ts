import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { nextTaskId, renderTaskFile, taskFileName, type NewTask } from '../tasks/task-template.js';
import { listTaskIds, TASK_DIRECTORIES } from './tasks.js';

/** A task file ready to write: every check that can refuse it has passed. */
export interface PreparedTask {
  id: string;
  /** Worktree-relative: `.guardkit/tasks/backlog/<ID>-<slug>.md`. */
  path: string;
  text: string;
}

/**
 * Checks and renders a new task without writing anything: a refused `task new` leaves the repository
 * as it was. Never reuses an id; every dependency must name a task of the working tree.
 */
export async function prepareNewTask(
  worktree: string,
  task: Omit<NewTask, 'id'> & { id?: string },
): Promise<PreparedTask> {
  const existing = await existingTaskIds(worktree);
  const id = task.id ?? nextTaskId(existing);
  if (existing.includes(id))
    throw new CallerError(
      `A task file for ${id} already exists.`,
      'Pick another --id, or omit it for the next free TASK-NNN.',
    );
  const text = renderTaskFile({ ...task, id });
  await assertKnownDependencies(worktree, task.depends_on ?? []);
  const relative = path.posix.join(TASK_DIRECTORIES[0]!, 'backlog', taskFileName(id, task.title));
  return { id, path: relative, text };
}

export async function writePreparedTask(worktree: string, task: PreparedTask): Promise<void> {
  await mkdir(path.join(worktree, path.dirname(task.path)), { recursive: true });
  await writeFile(path.join(worktree, task.path), task.text, { flag: 'wx' });
}

async function assertKnownDependencies(worktree: string, dependencies: string[]): Promise<void> {
  if (dependencies.length === 0) return;
  const known = await listTaskIds(worktree);
  const unknown = dependencies.filter((id) => !known.includes(id));
  if (unknown.length)
    throw new CallerError(
      `--depends-on names ${unknown.length === 1 ? 'a task' : 'tasks'} with no task file: ${unknown.join(', ')}.`,
      known.length
        ? `Known task ids: ${known.join(', ')}.`
        : 'There are no tasks yet: create the dependency first (coachgate task new).',
    );
}

async function existingTaskIds(worktree: string): Promise<string[]> {
  const ids: string[] = [];
  for (const directory of TASK_DIRECTORIES) {
    const entries = await readdir(path.join(worktree, directory), { recursive: true }).catch(
      () => [] as string[],
    );
    for (const entry of entries) {
      const id = /^([A-Za-z]+-\d+)/.exec(path.basename(entry))?.[1];
      if (id && entry.endsWith('.md')) ids.push(id);
    }
  }
  return ids;
}
