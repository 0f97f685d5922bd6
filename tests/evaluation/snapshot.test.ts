import { chmodSync, existsSync, lstatSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { baseSnapshot, type Snapshot } from '../../src/evaluation/snapshot.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { BROKEN_CALC, hasPytest, pythonTask, type PythonTask } from '../helpers/python-task.js';

/**
 * Snapshots are written from git's object store: nothing the Player configures in `.git/` (attributes,
 * filter drivers) decides what a trusted run sees or runs a program.
 */
let repo: TempRepo | undefined;
let snapshot: Snapshot | undefined;
let project: PythonTask | undefined;
afterEach(async () => {
  await snapshot?.remove();
  repo?.remove();
  await project?.close();
  project?.repo.remove();
  repo = snapshot = project = undefined;
});

describe('baseSnapshot', () => {
  it("ignores the Player's export-ignore attributes and smudge filters, keeping modes and links", async () => {
    repo = makeRepo({ 'tests/test_a.py': 'def test_a():\n    pass\n', 'run.sh': '#!/bin/sh\n' });
    chmodSync(path.join(repo.dir, 'run.sh'), 0o755);
    symlinkSync('run.sh', path.join(repo.dir, 'link.sh'));
    const base = repo.commit('base');
    const marker = path.join(os.tmpdir(), `coachgate-smudge-${process.pid}`);
    repo.write('.git/info/attributes', 'tests/* export-ignore\n* filter=evil\n');
    repo.git('config', 'filter.evil.smudge', `touch ${marker}; cat`);
    snapshot = await baseSnapshot(repo.dir, base);
    expect(readFileSync(path.join(snapshot.dir, 'tests/test_a.py'), 'utf8')).toMatch(/def test_a/);
    expect(existsSync(marker)).toBe(false);
    expect(lstatSync(path.join(snapshot.dir, 'run.sh')).mode & 0o111).not.toBe(0);
    expect(readlinkSync(path.join(snapshot.dir, 'link.sh'))).toBe('run.sh');
  });
});

describe.skipIf(!hasPytest)('trusted runs and .git/info/attributes (pytest installed)', () => {
  it('refuses broken code whose base test the Player hid from git archive with export-ignore', async () => {
    // The base test is weakened so the Player's own run passes; git archive would also leave the base
    // version out of the baseline and trusted snapshots, so nothing would compare it.
    project = await pythonTask({
      'calc.py': BROKEN_CALC,
      'tests/test_calc.py': 'def test_add():\n    assert True\n',
    });
    project.repo.write('.git/info/attributes', 'tests/test_calc.py export-ignore\n');
    const { run, result, text } = await project.approve();
    expect(run.status).toBe('passed');
    expect(result.isError).toBe(true);
    expect(text).toMatch(
      /base test tests\/test_calc\.py::test_add passed at the base but failed in the trusted run/,
    );
  });
});
