import { createHash } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  readBaseline,
  readFailToPass,
  writeBaseline,
  writeFailToPass,
  type FailToPassKey,
} from '../../src/evaluation/run-cache.js';
import { taskStateDirectory } from '../../src/records/state-directory.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/** Trusted run results kept across turns: found only under the key they were stored with. */
let repo: TempRepo | undefined;
afterEach(() => repo?.remove());

const TASK = 'TASK-001';
const KEY: FailToPassKey = {
  baseCommit: 'a'.repeat(40),
  command: { runner: 'pytest', files: ['tests/test_x.py'] },
  environment: { python: '/usr/bin/python3' },
  tests: 'b'.repeat(64),
};
const RUN = {
  status: 'failed' as const,
  tests: [{ id: 'tests/test_x.py::test_x', status: 'failed' as const }],
  limited_to: ['tests/test_x.py'],
};

describe('the fail-to-pass cache', () => {
  it('gives a run back under its own key only', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    await writeFailToPass(repo.dir, TASK, KEY, RUN);
    expect(await readFailToPass(repo.dir, TASK, KEY)).toEqual(RUN);
    for (const other of [
      { ...KEY, tests: 'c'.repeat(64) },
      { ...KEY, command: { runner: 'pytest' } },
      { ...KEY, environment: { python: '/opt/python3' } },
      { ...KEY, baseCommit: 'd'.repeat(40) },
    ])
      expect(await readFailToPass(repo.dir, TASK, other)).toBeUndefined();
    expect(await readFailToPass(repo.dir, 'TASK-002', KEY)).toBeUndefined();
  });

  it('keeps one entry per task: a newer run replaces the older', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    await writeFailToPass(repo.dir, TASK, KEY, RUN);
    const newer = { ...KEY, tests: 'e'.repeat(64) };
    await writeFailToPass(repo.dir, TASK, newer, { status: 'passed', tests: [] });
    expect(await readFailToPass(repo.dir, TASK, KEY)).toBeUndefined();
    expect(await readFailToPass(repo.dir, TASK, newer)).toEqual({ status: 'passed', tests: [] });
  });

  it('treats a damaged entry as none, so the run is made again', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    await writeFailToPass(repo.dir, TASK, KEY, RUN);
    const file = path.join(await taskStateDirectory(repo.dir, TASK), 'fail-to-pass.json');
    writeFileSync(file, '{"key": "');
    expect(await readFailToPass(repo.dir, TASK, KEY)).toBeUndefined();
  });

  it('keeps the baseline apart from it, under the key the baseline always had', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    const { tests: _digest, ...baselineKey } = KEY;
    const baseline = { base_commit: KEY.baseCommit, status: 'passed' as const, tests: [] };
    await writeBaseline(repo.dir, baselineKey, baseline);
    expect(await readBaseline(repo.dir, baselineKey)).toEqual(baseline);
    expect(await readFailToPass(repo.dir, TASK, KEY)).toBeUndefined();
    // Named as before the fail-to-pass cache existed: baselines cached then are still found.
    const name = createHash('sha256')
      .update(JSON.stringify([KEY.baseCommit, KEY.command, KEY.environment]))
      .digest('hex')
      .slice(0, 24);
    expect(
      existsSync(
        path.join(repo.dir, `.guardkit/autobuild/.baseline-cache/evaluation-${name}.json`),
      ),
    ).toBe(true);
  });
});
