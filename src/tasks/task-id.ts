import { CallerError } from '../errors/errors.js';
import { quotePrefix } from '../errors/quote.js';

/** Task ids become directory names under .guardkit/autobuild/, so they must not carry path syntax. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Names Windows reserves for devices, with or without an extension: `NUL.txt` opens the null device. */
const WINDOWS_DEVICE_NAME = /^(?:CON|PRN|AUX|NUL|COM[0-9]|LPT[0-9])(?:\..*)?$/i;

export function assertTaskId(taskId: string): string {
  if (WINDOWS_DEVICE_NAME.test(taskId)) {
    throw new CallerError(
      `Invalid task_id ${quotePrefix(taskId)}: it is a reserved device name on Windows.`,
      'Use a name such as "TASK-001".',
    );
  }
  if (!TASK_ID_PATTERN.test(taskId) || taskId.includes('..') || taskId.endsWith('.')) {
    throw new CallerError(
      `Invalid task_id ${quotePrefix(taskId)}.`,
      'Use 1-64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit, not ending with "." (e.g. "TASK-001").',
    );
  }
  return taskId;
}
