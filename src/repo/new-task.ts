import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../core/errors.js';
import { nextTaskId, renderTaskFile, taskFileName, type NewTask } from '../core/task-template.js';
import { TASK_DIRECTORIES } from './tasks.js';

/** Writes `.guardkit/tasks/backlog/<ID>-<slug>.md`; never overwrites a task with the same id. */
export async function writeNewTask(
  worktree: string,
  task: Omit<NewTask, 'id'> & { id?: string },
): Promise<{ id: string; path: string }> {
  const existing = await existingTaskIds(worktree);
  const id = task.id ?? nextTaskId(existing);
  if (existing.includes(id))
    throw new CallerError(
      `A task file for ${id} already exists.`,
      'Pick another --id, or omit it for the next free TASK-NNN.',
    );
  const text = renderTaskFile({ ...task, id });
  const relative = path.posix.join(TASK_DIRECTORIES[0]!, 'backlog', taskFileName(id, task.title));
  await mkdir(path.join(worktree, path.dirname(relative)), { recursive: true });
  await writeFile(path.join(worktree, relative), text, { flag: 'wx' });
  return { id, path: relative };
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
