import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { projectEnvironment } from '../../src/runner/environment.js';
import { pyenvChoice } from '../../src/runner/pyenv.js';
import { machinePyenv } from '../helpers/pyenv.js';

const pyenv = machinePyenv();

let dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  dirs = [];
});

function folder(version?: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'coachgate-pyenv-'));
  dirs.push(dir);
  if (version) writeFileSync(path.join(dir, '.python-version'), `${version}\n`);
  return dir;
}

describe.skipIf(!pyenv)(
  `pyenv's choice, resolved once (pyenv with two versions)${pyenv ? '' : ' — skipped: not installed'}`,
  () => {
    // The suite puts a pyenv version's bin directory first to skip the shims: taken out here.
    const shimsFirst = () => ({
      PATH: [
        pyenv!.shims,
        ...process.env
          .PATH!.split(path.delimiter)
          .filter((entry) => !entry.startsWith(path.join(pyenv!.root, 'versions'))),
      ].join(path.delimiter),
    });
    const bin = (version: string) => path.join(pyenv!.root, 'versions', version, 'bin');

    it("takes the directory's .python-version, as the shims would", async () => {
      expect(await pyenvChoice(folder(pyenv!.other), shimsFirst())).toEqual({
        versions: [pyenv!.other],
        bins: [bin(pyenv!.other)],
      });
    });

    it('looks where it is told when the directory has no .python-version of its own', async () => {
      const worktree = folder(pyenv!.other);
      const snapshot = folder();
      expect((await pyenvChoice(snapshot, shimsFirst(), { orFrom: worktree }))?.versions).toEqual([
        pyenv!.other,
      ]);
      // A snapshot with its own (the base's) file keeps it.
      const own = folder(pyenv!.global);
      expect((await pyenvChoice(own, shimsFirst(), { orFrom: worktree }))?.versions).toEqual([
        pyenv!.global,
      ]);
    });

    it('looks again once a .python-version it read changes, and not before', async () => {
      const project = folder(pyenv!.other);
      const first = await pyenvChoice(project, shimsFirst());
      expect(await pyenvChoice(project, shimsFirst())).toBe(first);
      writeFileSync(path.join(project, '.python-version'), `${pyenv!.global}\n`);
      expect((await pyenvChoice(project, shimsFirst()))?.versions).toEqual([pyenv!.global]);
      // A file that appears in a folder between the directory and the one that chose does too.
      const nested = path.join(project, 'pkg');
      mkdirSync(nested);
      expect((await pyenvChoice(nested, shimsFirst()))?.versions).toEqual([pyenv!.global]);
      writeFileSync(path.join(nested, '.python-version'), `${pyenv!.other}\n`);
      expect((await pyenvChoice(nested, shimsFirst()))?.versions).toEqual([pyenv!.other]);
    });

    it('leaves the shims to choose for system, an unknown version or a path out of versions/', async () => {
      for (const version of ['system', '9.9.9', '../../..'])
        expect(await pyenvChoice(folder(version), shimsFirst()), version).toBeUndefined();
    });

    it('does nothing when a real interpreter comes before the shims', async () => {
      const real = path.dirname(
        execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
          encoding: 'utf8',
          env: { ...process.env, ...shimsFirst() },
        }).trim(),
      );
      const env = { PATH: [real, pyenv!.shims, process.env.PATH].join(path.delimiter) };
      expect(await pyenvChoice(folder(pyenv!.other), env)).toBeUndefined();
    });

    it("puts the chosen bin directory first on a run's PATH and says so", async () => {
      const project = folder(pyenv!.other);
      mkdirSync(path.join(project, 'tests'));
      const environment = await projectEnvironment(project, { ...process.env, ...shimsFirst() });
      expect(environment.env.PATH!.split(path.delimiter)[0]).toBe(bin(pyenv!.other));
      expect(environment.notes.join('\n')).toContain(`using pyenv's Python ${pyenv!.other}`);
      const version = execFileSync(
        'python3',
        ['-c', 'import platform; print(platform.python_version())'],
        {
          encoding: 'utf8',
          env: environment.env,
          cwd: os.tmpdir(),
        },
      ).trim();
      expect(version).toBe(pyenv!.other);
    });
  },
);
