import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { queryFile, stopQueryProcess, type QueryError } from '../../src/repo/query-process.js';
import { descendantsFromChildren } from '../../src/runner/process-tree.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'coachgate-query-'));
afterAll(() => {
  stopQueryProcess();
  rmSync(scratch, { recursive: true, force: true });
});
// The built module (npm test builds first): a plain node child imports it.
const MODULE = path.resolve('dist/repo/query-process.js');

describe('read-only queries from a small helper process', () => {
  it('answers as the command run directly does, output and failure alike', async () => {
    const direct = execFileSync('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' });
    expect((await queryFile('git', ['rev-parse', '--show-toplevel'], process.cwd())).stdout).toBe(
      direct,
    );
    const failure = (await queryFile('git', ['rev-parse', '--show-toplevel'], scratch).catch(
      (error: unknown) => error,
    )) as QueryError;
    expect(failure).toBeInstanceOf(Error);
    expect(failure.code).toBe(128);
    expect(failure.stderr).toMatch(/not a git repository/);
    const missing = (await queryFile('no-such-program-here', [], scratch).catch(
      (error: unknown) => error,
    )) as QueryError;
    expect(missing.code).toBe('ENOENT');
  });

  it('keeps answering after its helper was killed', async () => {
    await queryFile('git', ['--version'], scratch);
    stopQueryProcess();
    expect((await queryFile('git', ['--version'], scratch)).stdout).toMatch(/^git version/);
  });

  it.runIf(process.platform === 'linux')(
    'neither keeps an idle server alive nor outlives it',
    async () => {
      // A process that made one query ends by itself; one killed leaves no helper behind.
      const script = `const { queryFile } = await import(${JSON.stringify(MODULE)});
      console.log((await queryFile('git', ['--version'], '.')).stdout.trim());
      if (process.argv.includes('--hold')) setInterval(() => {}, 1000);`;
      const run = (...args: string[]) =>
        spawn(process.execPath, ['--input-type=module', '-e', script, '--', ...args], {
          cwd: scratch,
          stdio: ['ignore', 'pipe', 'inherit'],
        });
      const ended = run();
      let printed = '';
      ended.stdout.on('data', (chunk: Buffer) => (printed += chunk.toString()));
      const code = await new Promise((resolve) => ended.on('exit', resolve));
      expect([code, printed.trim()]).toEqual([0, expect.stringMatching(/^git version/)]);

      const held = run('--hold');
      // Its first line says the query was answered (or it ended: then no helper is found below).
      await new Promise((resolve) => {
        held.stdout.once('data', resolve);
        held.once('exit', resolve);
      });
      const helpers = descendantsFromChildren(held.pid!) ?? [];
      expect(helpers.length).toBeGreaterThan(0);
      held.kill('SIGKILL');
      for (let tries = 0; tries < 100 && helpers.some(({ pid }) => alive(pid)); tries++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(helpers.filter(({ pid }) => alive(pid))).toEqual([]);
    },
  );
});

/** Running: a zombie (exited, not yet reaped by init) runs nothing. */
function alive(pid: number): boolean {
  try {
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.startsWith('Z');
  } catch {
    return false;
  }
}
