import { stringify } from 'yaml';
import { CallerError } from '../errors/errors.js';
import { assertTaskId } from './task-id.js';

export interface NewTask {
  id: string;
  title: string;
  criteria: string[];
  description?: string;
  depends_on?: string[];
}

/** A GuardKit task file (the format load_task reads): front matter, description, numbered criteria. */
export function renderTaskFile(task: NewTask): string {
  assertTaskId(task.id);
  const title = task.title.trim();
  if (!title)
    throw new CallerError('A task needs a title.', 'Pass --title "What the task achieves".');
  // A criterion is kept as written (`"  Hello, World!  "` means those spaces); only a line break, which
  // would end its checklist item, becomes a space.
  const criteria = task.criteria
    .map((item) => item.trim().replace(/\s*\r?\n\s*/g, ' '))
    .filter(Boolean);
  if (criteria.length === 0)
    throw new CallerError(
      'A task needs at least one acceptance criterion: the Coach can only approve what it can verify.',
      'Pass --criterion "..." once per criterion.',
    );
  const dependencies = task.depends_on ?? [];
  dependencies.forEach((id) => assertTaskId(id));
  const meta = stringify({
    id: task.id,
    title,
    status: 'backlog',
    task_type: 'feature',
    ...(dependencies.length ? { depends_on: dependencies } : {}),
  }).trimEnd();
  const lines = criteria.map(
    (item, index) => `- [ ] AC-${String(index + 1).padStart(3, '0')}: ${item}`,
  );
  return `---\n${meta}\n---\n# ${title}\n\n## Description\n${task.description?.trim() || title}\n\n## Acceptance Criteria\n${lines.join('\n')}\n`;
}

/** `TASK-007-add-a-greeting.md`: the id first, so load_task finds it, then a readable slug. */
export function taskFileName(id: string, title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 48);
  return `${id}${slug ? `-${slug}` : ''}.md`;
}

/** The next TASK-NNN after the highest number among existing ids. */
export function nextTaskId(existing: string[]): string {
  const highest = Math.max(
    0,
    ...existing
      .map((id) => /^TASK-(\d+)$/.exec(id)?.[1])
      .filter(Boolean)
      .map(Number),
  );
  return `TASK-${String(highest + 1).padStart(3, '0')}`;
}
