import {
  chmodSync,
  existsSync,
  lstatSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { trustedSelection } from '../../src/scope/product-code.js';
import {
  BASE_FILE_TIME,
  baseSnapshot,
  failToPassSnapshot,
  LAID_FILE_TIME,
  trustedSnapshot,
  type Snapshot,
} from '../../src/evaluation/snapshot.js';
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

describe('snapshots copy any tree git can hold', () => {
  const snapshots: Snapshot[] = [];
  afterEach(async () => {
    await Promise.all(snapshots.splice(0).map((item) => item.remove()));
  });

  it('links (to files, directories, outside the tree, dangling), submodules, modes, case-only renames, force-added ignored files', async () => {
    const sub = makeRepo({ 'data.txt': 'from the submodule\n' });
    try {
      repo = makeRepo({
        'pyproject.toml': '[project]\nname = "app"\n',
        'src/app/__init__.py': '',
        'src/app/Calc.py': 'X = 1\n',
        'src/app/run.sh': '#!/bin/sh\n',
        'tests/fixtures/real/a.txt': 'a\n',
        '.gitignore': '*.bin\n',
      });
      const links: [string, string][] = [
        ['a.txt', 'tests/fixtures/file-link'],
        ['real', 'tests/fixtures/dir-link'],
        ['/etc/hostname', 'tests/fixtures/outside-link'],
        ['missing.txt', 'tests/fixtures/dangling-link'],
      ];
      for (const [target, link] of links) symlinkSync(target, path.join(repo.dir, link));
      chmodSync(path.join(repo.dir, 'src/app/run.sh'), 0o755);
      repo.write('tests/fixtures/model.bin', 'weights\n');
      repo.git('add', '-f', 'tests/fixtures/model.bin');
      repo.git('-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub.dir, 'vendor/sub');
      const base = repo.commit('base');
      // The Player: a case-only rename of a module, the fixture links replaced by other links, a
      // changed executable bit; none of it may make a snapshot fail.
      renameSync(path.join(repo.dir, 'src/app/Calc.py'), path.join(repo.dir, 'src/app/calc.py'));
      rmSync(path.join(repo.dir, 'tests/fixtures/file-link'));
      symlinkSync('real/a.txt', path.join(repo.dir, 'tests/fixtures/file-link'));
      symlinkSync('../../tests/fixtures/real', path.join(repo.dir, 'src/app/fixtures-link'));
      chmodSync(path.join(repo.dir, 'src/app/run.sh'), 0o644);
      chmodSync(path.join(repo.dir, 'src/app/__init__.py'), 0o755);
      const selection = await trustedSelection(repo.dir, base);
      const baseTree = await baseSnapshot(repo.dir, base);
      const trusted = await trustedSnapshot(repo.dir, baseTree, selection);
      const failToPass = await failToPassSnapshot(repo.dir, baseTree);
      snapshots.push(baseTree, trusted, failToPass);
      for (const dir of [baseTree.dir, trusted.dir, failToPass.dir]) {
        expect(readlinkSync(path.join(dir, 'tests/fixtures/dir-link'))).toBe('real');
        expect(readlinkSync(path.join(dir, 'tests/fixtures/outside-link'))).toBe('/etc/hostname');
        expect(readlinkSync(path.join(dir, 'tests/fixtures/dangling-link'))).toBe('missing.txt');
        expect(readFileSync(path.join(dir, 'tests/fixtures/model.bin'), 'utf8')).toBe('weights\n');
        expect(readFileSync(path.join(dir, 'vendor/sub/data.txt'), 'utf8')).toBe(
          'from the submodule\n',
        );
      }
      // The fixtures are the base's in the trusted run, the Player's in the fail-to-pass run.
      expect(readlinkSync(path.join(trusted.dir, 'tests/fixtures/file-link'))).toBe('a.txt');
      expect(readlinkSync(path.join(failToPass.dir, 'tests/fixtures/file-link'))).toBe(
        'real/a.txt',
      );
      // Product code is the Player's: the rename and the mode change; the link in src/ is not code.
      expect(existsSync(path.join(trusted.dir, 'src/app/calc.py'))).toBe(true);
      expect(existsSync(path.join(trusted.dir, 'src/app/Calc.py'))).toBe(false);
      expect(lstatSync(path.join(trusted.dir, 'src/app/__init__.py')).mode & 0o111).not.toBe(0);
      // A shell script is not Python product code: the base's, executable, runs.
      expect(lstatSync(path.join(trusted.dir, 'src/app/run.sh')).mode & 0o111).not.toBe(0);
      expect(existsSync(path.join(trusted.dir, 'src/app/fixtures-link'))).toBe(false);
      expect(selection.left_out).toEqual(
        expect.arrayContaining([
          { file: 'src/app/fixtures-link', change: 'added' },
          { file: 'tests/fixtures/file-link', change: 'modified' },
          { file: 'src/app/run.sh', change: 'modified' },
        ]),
      );
    } finally {
      sub.remove();
    }
  });
});

describe('modification times', () => {
  const snapshots: Snapshot[] = [];
  afterEach(async () => {
    await Promise.all(snapshots.splice(0).map((item) => item.remove()));
  });

  it('gives every file taken from the base one time and every file laid from the Player another', async () => {
    repo = makeRepo({
      'pyproject.toml': '[project]\nname = "app"\n',
      'app/__init__.py': '',
      'app/calc.py': 'X = 1\n',
      'app/util.py': 'Y = 1\n',
      'tests/test_calc.py': 'from app import calc, util\n\n\ndef test_x():\n    pass\n',
    });
    const base = repo.commit('base');
    // The Player's versions, whatever times the Player gives them.
    repo.write('app/calc.py', 'X = 2\n');
    repo.write('tests/test_new.py', 'def test_y():\n    pass\n');
    utimesSync(path.join(repo.dir, 'app/calc.py'), BASE_FILE_TIME, BASE_FILE_TIME);
    const baseTree = await baseSnapshot(repo.dir, base);
    const trusted = await trustedSnapshot(
      repo.dir,
      baseTree,
      await trustedSelection(repo.dir, base),
      true,
    );
    const failToPass = await failToPassSnapshot(repo.dir, baseTree);
    snapshots.push(baseTree, trusted, failToPass);
    const time = (dir: string, file: string) => statSync(path.join(dir, file)).mtimeMs;
    const [fromBase, laid] = [BASE_FILE_TIME.getTime(), LAID_FILE_TIME.getTime()];
    for (const dir of [baseTree.dir, trusted.dir, failToPass.dir])
      expect(time(dir, 'app/util.py')).toBe(fromBase);
    expect(time(baseTree.dir, 'app/calc.py')).toBe(fromBase);
    expect(time(baseTree.dir, 'tests/test_calc.py')).toBe(fromBase);
    // The trusted run: the Player's code and added tests over the base's tests.
    expect(time(trusted.dir, 'app/calc.py')).toBe(laid);
    expect(time(trusted.dir, 'tests/test_new.py')).toBe(laid);
    expect(time(trusted.dir, 'tests/test_calc.py')).toBe(fromBase);
    // The fail-to-pass run: every test file is the Player's, over the base's code.
    expect(time(failToPass.dir, 'app/calc.py')).toBe(fromBase);
    expect(time(failToPass.dir, 'tests/test_new.py')).toBe(laid);
    expect(time(failToPass.dir, 'tests/test_calc.py')).toBe(laid);
  });
});

describe('a snapshot of a large tree', () => {
  const snapshots: Snapshot[] = [];
  afterEach(async () => {
    await Promise.all(snapshots.splice(0).map((item) => item.remove()));
  });

  it('leaves the Player’s files that are the base’s as extracted, and lays the changed ones', async () => {
    const data = Object.fromEntries(
      Array.from({ length: 1_000 }, (_, index) => [`tests/data/f${index}.txt`, `${index}\n`]),
    );
    repo = makeRepo({
      'app.py': 'X = 1\n',
      'tests/test_app.py': 'def test_x():\n    pass\n',
      ...data,
    });
    const base = repo.commit('base');
    repo.write('tests/data/f0.txt', 'changed\n');
    repo.write('tests/test_app.py', 'def test_y():\n    pass\n');
    const baseTree = await baseSnapshot(repo.dir, base);
    const failToPass = await failToPassSnapshot(repo.dir, baseTree);
    snapshots.push(baseTree, failToPass);
    const at = (file: string) => path.join(failToPass.dir, file);
    expect(readFileSync(at('tests/data/f0.txt'), 'utf8')).toBe('changed\n');
    expect(statSync(at('tests/data/f0.txt')).mtimeMs).toBe(LAID_FILE_TIME.getTime());
    expect(readFileSync(at('tests/test_app.py'), 'utf8')).toContain('test_y');
    // Unchanged: the base's extraction, with the base file's time (its bytecode is the base's).
    expect(statSync(at('tests/data/f1.txt')).mtimeMs).toBe(BASE_FILE_TIME.getTime());
    expect(readFileSync(at('tests/data/f1.txt'), 'utf8')).toBe('1\n');
    expect(failToPass.laid).toContain('tests/data/f1.txt');
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
