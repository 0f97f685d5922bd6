import { CallerError } from './errors.js';

/** Task ids become directory names under .guardkit/autobuild/, so they must not carry path syntax. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function assertTaskId(taskId: string): string {
  if (!TASK_ID_PATTERN.test(taskId) || taskId.includes('..')) {
    throw new CallerError(
      `Invalid task_id ${JSON.stringify(taskId)}.`,
      'Use 1-64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit (e.g. "TASK-001").',
    );
  }
  return taskId;
}
