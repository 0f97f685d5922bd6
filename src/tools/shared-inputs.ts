import { z } from 'zod';
import { TASK_ID_PATTERN } from '../tasks/task-id.js';

/** Input fields every repository tool shares, described once so hosts show the same help everywhere. */
export const worktreeInput = z
  .string()
  .min(1)
  .describe(
    'Repository or git worktree root: absolute, or relative to the first allowed root (--root / client roots / cwd).',
  );

export const taskIdInput = z
  .string()
  .regex(
    TASK_ID_PATTERN,
    'task_id must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
  )
  .describe('Task id, e.g. TASK-001 (matches .guardkit/tasks/**/<ID>*.md).');
