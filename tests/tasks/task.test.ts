import { describe, expect, it } from 'vitest';
import { parseTaskMarkdown } from '../../src/tasks/task.js';
import { SAMPLE_TASK } from '../helpers/git-repo.js';

describe('parseTaskMarkdown', () => {
  it('reads front matter and the acceptance checklist, keeping wrapped lines and explicit ids', () => {
    const task = parseTaskMarkdown(SAMPLE_TASK, 'TASK-001.md');
    expect(task).toMatchObject({
      id: 'TASK-001',
      title: 'Greeting helper',
      status: 'in_progress',
      task_type: 'feature',
      dependencies: ['TASK-000'],
    });
    expect(task.acceptance_criteria).toEqual([
      { id: 'AC-001', text: '`greet(name)` returns "Hello, <name>!"', checked: false },
      {
        id: 'AC-002',
        text: 'Empty names raise a ValueError with a helpful message',
        checked: true,
      },
      { id: 'AC-003', text: 'Tests cover both cases', checked: false },
    ]);
  });

  it('numbers criteria by position when none has an id, and accepts `dependencies`', () => {
    const task = parseTaskMarkdown(
      '---\ntitle: T\ndependencies: A, B\n---\n## Acceptance Criteria\n- [ ] one\n- [ ] two\n',
      'x.md',
    );
    expect(task.dependencies).toEqual(['A', 'B']);
    expect(task.acceptance_criteria.map((c) => c.id)).toEqual(['AC-001', 'AC-002']);
  });

  it('reports a broken front matter instead of guessing', () => {
    expect(() => parseTaskMarkdown('---\ntitle: [unclosed\n---\n', 'bad.md')).toThrow(
      /bad\.md: the YAML front matter does not parse/,
    );
  });

  it('has no criteria when the section is missing', () => {
    expect(parseTaskMarkdown('# Just a title\n- [ ] stray\n', 'x.md').acceptance_criteria).toEqual(
      [],
    );
  });
});
