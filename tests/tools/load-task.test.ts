import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

describe('load_task through MCP', () => {
  it('reads requirements from the base commit and flags a task file edited in the worktree', async () => {
    repo = makeRepo({ '.guardkit/tasks/backlog/TASK-001-greeting.md': SAMPLE_TASK });
    repo.git('checkout', '-q', '-b', 'autobuild/TASK-001');
    // The Player ticks every box and drops a criterion in its worktree: the contract must not move.
    repo.write(
      '.guardkit/tasks/backlog/TASK-001-greeting.md',
      SAMPLE_TASK.replace(/- \[ \]/g, '- [x]').replace(/- \[x\] Tests cover both cases\n/, ''),
    );
    const { client, close } = await connect({ roots: [repo.dir] });
    const result = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-001' });
    await close();
    const data = dataOf(result);
    expect(data.path).toBe('.guardkit/tasks/backlog/TASK-001-greeting.md');
    expect(data.acceptance_criteria).toHaveLength(3);
    expect(data.acceptance_criteria[0]).toEqual({
      id: 'AC-001',
      text: '`greet(name)` returns "Hello, <name>!"',
      checked: false,
    });
    expect(data.modified_in_worktree).toBe(true);
    expect(data.requirements).toBe(SAMPLE_TASK);
    expect(textOf(result)).toMatch(/3 acceptance criteria .*MODIFIED in worktree/);
  });

  it('accepts a worktree relative to the first root', async () => {
    repo = makeRepo({
      'tasks/TASK-7.md': '---\ntitle: Seven\n---\n## Acceptance Criteria\n- [ ] works\n',
      'tasks/TASK-70.md': '---\ntitle: Seventy\n---\n',
    });
    const parent = repo.dir.replace(/\/[^/]+$/, '');
    const { client, close } = await connect({ roots: [parent] });
    const data = dataOf(
      await callTool(client, 'load_task', {
        worktree: repo.dir.slice(parent.length + 1),
        task_id: 'TASK-7',
      }),
    );
    await close();
    expect(data).toMatchObject({
      title: 'Seven',
      path: 'tasks/TASK-7.md',
      modified_in_worktree: false,
    });
  });

  it('explains a task that exists only in the working tree', async () => {
    repo = makeRepo({ 'README.md': 'x' });
    repo.write('.guardkit/tasks/TASK-9.md', '---\ntitle: new\n---\n');
    const { client, close } = await connect({ roots: [repo.dir] });
    const result = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-9' });
    await close();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /exists only in the working tree .*commit the task file on the base branch/,
    );
  });

  it('refuses a missing task, listing the known ones and how to create it', async () => {
    repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    const { client, close } = await connect({ roots: [repo.dir] });
    const result = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-404' });
    await close();
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /No task file for TASK-404.* Known tasks: TASK-001\. To add it: coachgate task new --id TASK-404 .*create \.guardkit\/tasks\/backlog\/TASK-404\.md/,
    );
  });
});
