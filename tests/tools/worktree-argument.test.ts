import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';

let repo: TempRepo;
let plainDirectory: string;
afterEach(() => {
  repo?.remove();
  rmSync(plainDirectory, { recursive: true, force: true });
});

describe('a worktree argument that names no worktree', () => {
  it('is refused as what it is: a NUL byte, a plain directory, a .git directory', async () => {
    repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    plainDirectory = mkdtempSync(path.join(os.tmpdir(), 'coachgate-plain-'));
    const { client, close } = await connect({ roots: [repo.dir, plainDirectory] });
    const read = (worktree: string) =>
      callTool(client, 'read_task_work_results', { worktree, task_id: 'TASK-001' });
    try {
      const nul = await read(`${repo.dir}\0/etc`);
      expect(nul.isError).toBe(true);
      expect(textOf(nul)).toContain('contains a NUL byte');

      const plain = await read(plainDirectory);
      expect(plain.isError).toBe(true);
      expect(textOf(plain)).toContain(`${plainDirectory} is not a git repository`);

      const gitDirectory = await read(path.join(repo.dir, '.git'));
      expect(gitDirectory.isError).toBe(true);
      expect(textOf(gitDirectory)).toContain('.git is a git directory');

      // The repository itself is read as before.
      expect((await read(repo.dir)).isError).toBeFalsy();
    } finally {
      await close();
    }
  });
});
