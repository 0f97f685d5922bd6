import { afterEach, describe, expect, it } from 'vitest';
import { callTool, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';
import { connectOver } from '../helpers/transports.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

/** A task file of about `mib` MiB: one criterion, then the bulk as its description. */
const bigTask = (id: string, mib: number) =>
  `---\nid: ${id}\ntitle: Big\n---\n## Acceptance Criteria\n- [ ] AC-001: ${'requirement text '.repeat((mib * 1024 * 1024) / 17)}\n`;

describe('large answers through a real stdio client', () => {
  it('a 50 MB task file and a 12 MB one are refused plainly, and the session lives on', async () => {
    repo = makeRepo({
      '.guardkit/tasks/TASK-001.md': SAMPLE_TASK,
      '.guardkit/tasks/TASK-050.md': bigTask('TASK-050', 50),
      '.guardkit/tasks/TASK-012.md': bigTask('TASK-012', 12),
    });
    const { client, close } = await connectOver('stdio', repo.dir);
    try {
      const huge = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-050' });
      expect(huge.isError).toBe(true);
      expect(textOf(huge)).toMatch(
        /^The task file \.guardkit\/tasks\/TASK-050\.md at the base commit [0-9a-f]{12} is over the 16 MiB coachgate reads/,
      );
      // Under the read limit, but twice the requirements would pass the client's 10 MiB.
      const big = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'TASK-012' });
      expect(big.isError).toBe(true);
      expect(textOf(big)).toMatch(/^The load_task answer would be 2\d\.\d MiB, over the 8\.0 MiB/);
      const small = await callTool(client, 'load_task', {
        worktree: repo.dir,
        task_id: 'TASK-001',
      });
      expect(dataOf(small).title).toBe('Greeting helper');
    } finally {
      await close();
    }
  });
});
