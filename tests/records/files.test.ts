import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonFile } from '../../src/records/files.js';
import { taskDirectory } from '../../src/records/mirror-paths.js';

const run = promisify(execFile);
let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('store files', () => {
  it('tells a missing file from a corrupt or half-written one', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-store-'));
    expect((await readJsonFile(path.join(dir, 'none.json'))).state).toBe('missing');
    writeFileSync(path.join(dir, 'half.json'), '{"turn": 1, "issues": [');
    const half = await readJsonFile(path.join(dir, 'half.json'));
    expect(half).toMatchObject({ state: 'corrupt' });
    expect(half.state === 'corrupt' && half.problem).toMatch(/invalid JSON at line 1/);
    writeFileSync(path.join(dir, 'empty.json'), '');
    expect(await readJsonFile(path.join(dir, 'empty.json'))).toMatchObject({
      state: 'corrupt',
      problem: 'file is empty (half-written?)',
    });
  });

  it('names the line and column of an unexpected token, where the parser names no position', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-store-'));
    for (const [text, place] of [
      ['{\n  "a": [oops]\n}\n', 'line 2, column 9'],
      ['{\n  "a": tru\n}', 'line 2, column 8'],
      ['// note\n{}', 'line 1, column 1'],
      ['{"a": "x\\q"}', 'line 1, column 10'],
      // Far into the text, V8 quotes it from `..."`, line breaks included.
      ['{\n  "tests_passed": true,\n  "files_created": ["a.js",]\n}\n', 'line 3, column 28'],
    ]) {
      writeFileSync(path.join(dir, 'bad.json'), text!);
      const read = await readJsonFile(path.join(dir, 'bad.json'));
      const problem = read.state === 'corrupt' ? read.problem : '';
      expect(problem, text).toMatch(new RegExp(`^invalid JSON at ${place}:`));
      expect(problem, text).not.toMatch(/\n|is not valid JSON/);
    }
  });

  it('keeps task records inside .guardkit/autobuild/<TASK>', () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-store-'));
    expect(taskDirectory(dir, 'TASK-1')).toBe(path.join(dir, '.guardkit/autobuild/TASK-1'));
    expect(() => taskDirectory(dir, '../x')).toThrow(/Invalid task_id/);
  });

  it('serialises read-modify-write across processes: 4 processes x 15 increments lose nothing', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-lock-'));
    await run('git', ['init', '-q'], { cwd: dir });
    mkdirSync(path.join(dir, '.guardkit/autobuild/TASK-1'), { recursive: true });
    const counter = path.join(dir, '.guardkit/autobuild/TASK-1/counter.json');
    writeFileSync(counter, '{"n":0}');
    // Each child re-reads inside the lock, yields, then writes: without the lock increments would be lost.
    const script = `
      import { withTaskLock } from ${JSON.stringify(new URL('../../dist/records/task-lock.js', import.meta.url).href)};
      import { readFile, writeFile } from 'node:fs/promises';
      for (let i = 0; i < 15; i++) {
        await withTaskLock(${JSON.stringify(dir)}, 'TASK-1', async () => {
          const value = JSON.parse(await readFile(${JSON.stringify(counter)}, 'utf8'));
          await new Promise((resolve) => setTimeout(resolve, 2));
          await writeFile(${JSON.stringify(counter)}, JSON.stringify({ n: value.n + 1 }));
        });
      }`;
    await Promise.all(
      Array.from({ length: 4 }, () => run(process.execPath, ['--input-type=module', '-e', script])),
    );
    expect(JSON.parse(readFileSync(counter, 'utf8'))).toEqual({ n: 60 });
  });
});
