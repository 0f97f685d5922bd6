import { renameSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { assertRepository, resolveBase } from '../../src/repo/git.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/**
 * The trusted base every tool call resolves, and the repository check before it: both are
 * answered from what git says now, whatever an earlier call in the same process saw.
 */
let repo: TempRepo;
afterEach(() => repo?.remove());

describe('the trusted base', () => {
  it('is the merge-base with main, and follows main when it moves', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    const fork = repo.git('rev-parse', 'HEAD');
    repo.git('checkout', '-q', '-b', 'feature');
    repo.write('b.txt', 'b\n');
    repo.commit('feature work');
    expect(await resolveBase(repo.dir)).toEqual({
      commit: fork,
      source: 'merge-base HEAD main',
    });
    // main catches up with the feature branch: the base moves with it.
    repo.git('branch', '-f', 'main', 'feature');
    expect((await resolveBase(repo.dir)).commit).toBe(repo.git('rev-parse', 'HEAD'));
  });

  it('takes master, then origin/main, when main is absent, and a tag named main is no branch', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    const first = repo.git('rev-parse', 'HEAD');
    repo.git('branch', '-m', 'main', 'master');
    repo.git('checkout', '-q', '-b', 'feature');
    repo.commit('feature work');
    expect(await resolveBase(repo.dir)).toEqual({
      commit: first,
      source: 'merge-base HEAD master',
    });
    repo.git('branch', '-D', 'master');
    repo.git('update-ref', 'refs/remotes/origin/main', first);
    repo.git('tag', 'main', 'HEAD');
    expect(await resolveBase(repo.dir)).toEqual({
      commit: first,
      source: 'merge-base HEAD origin/main',
    });
  });

  it('is HEAD when no default branch shares its history', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    repo.git('checkout', '-q', '--orphan', 'other');
    repo.commit('unrelated');
    expect(await resolveBase(repo.dir)).toEqual({
      commit: repo.git('rev-parse', 'HEAD'),
      source: 'HEAD',
    });
  });
});

describe('the repository check', () => {
  it('refuses a subfolder and a former repository, after the root passed', async () => {
    repo = makeRepo({ 'src/a.txt': 'a\n' });
    await assertRepository(repo.dir);
    await expect(assertRepository(path.join(repo.dir, 'src'))).rejects.toThrow(
      /is inside the git repository .*, not its root/,
    );
    renameSync(path.join(repo.dir, '.git'), path.join(repo.dir, 'git-was-here'));
    await expect(assertRepository(repo.dir)).rejects.toThrow(/is not a git repository/);
  });

  it('refuses a repository whose .git was replaced by one with no commits', async () => {
    repo = makeRepo({ 'a.txt': 'a\n' });
    await assertRepository(repo.dir);
    renameSync(path.join(repo.dir, '.git'), path.join(repo.dir, 'old-git'));
    repo.git('init', '-q', '-b', 'main');
    await expect(assertRepository(repo.dir)).rejects.toThrow(/has no commits yet/);
  });
});
