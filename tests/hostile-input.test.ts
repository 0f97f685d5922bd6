import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultConfig } from '../src/config/config.js';
import { assertTaskId } from '../src/tasks/task-id.js';
import { detectTestCommand } from '../src/runner/detect.js';
import { readRegularFile } from '../src/repo/read-text.js';
import { makeRepo, SAMPLE_TASK } from './helpers/git-repo.js';
import { callTool, connect, textOf } from './helpers/mcp.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('files are read only when regular and small enough', () => {
  it('reads a regular file', async () => {
    writeFileSync(path.join(dir, 'a.txt'), 'hello');
    expect(await readRegularFile(path.join(dir, 'a.txt'))).toBe('hello');
  });

  it.skipIf(process.platform === 'win32')(
    'refuses a FIFO at once (no writer: a plain read would wait forever)',
    async () => {
      const fifo = path.join(dir, 'fifo');
      execFileSync('mkfifo', [fifo]);
      await expect(readRegularFile(fifo)).rejects.toMatchObject({ code: 'ENOTREG' });
    },
  );

  it.skipIf(process.platform === 'win32')(
    'a FIFO planted among the test files and as package.json does not stall test detection',
    async () => {
      const project = path.join(dir, 'fifo-project');
      execFileSync('mkdir', ['-p', path.join(project, 'tests')]);
      writeFileSync(path.join(project, 'tests', 'test_a.py'), 'def test_a():\n    assert True\n');
      execFileSync('mkfifo', [path.join(project, 'tests', 'test_hang.py')]);
      execFileSync('mkfifo', [path.join(project, 'setup.cfg')]);
      expect(await detectTestCommand(project, defaultConfig())).toMatchObject({ runner: 'pytest' });
    },
  );

  it('refuses a device and a file over the limit without reading it', async () => {
    if (process.platform !== 'win32')
      await expect(readRegularFile('/dev/zero')).rejects.toMatchObject({ code: 'ENOTREG' });
    writeFileSync(path.join(dir, 'big.txt'), 'x'.repeat(2048));
    await expect(readRegularFile(path.join(dir, 'big.txt'), 1024)).rejects.toMatchObject({
      code: 'EFBIG',
    });
  });
});

describe('task ids and error messages', () => {
  it.each(['CON', 'nul', 'COM1', 'LPT9.txt', 'aux.md'])(
    'refuses the Windows device name %s as a task id',
    (id) => {
      expect(() => assertTaskId(id)).toThrow(/reserved device name on Windows/);
    },
  );

  it('quotes only a short prefix of a huge argument, so the answer stays small', async () => {
    const repo = makeRepo({ '.guardkit/tasks/TASK-001.md': SAMPLE_TASK });
    const { client, close } = await connect({ roots: [repo.dir] });
    try {
      const huge = `${repo.dir}/${'x'.repeat(9 * 1024 * 1024)}`;
      const result = await callTool(client, 'load_task', { worktree: huge, task_id: 'TASK-001' });
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result).length).toBeLessThan(4_000);
      const refused = await callTool(client, 'load_task', { worktree: repo.dir, task_id: 'CON' });
      expect(textOf(refused)).toMatch(/reserved device name/);
    } finally {
      await close();
      repo.remove();
    }
  });
});
