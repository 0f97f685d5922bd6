import { describe, expect, it } from 'vitest';
import { readOnceAtCommit } from '../../src/repo/commit-reads.js';

const COMMIT = 'a'.repeat(40);
/** A read that counts its calls and answers `answers` in turn. */
function counted(...answers: (string | undefined | Error)[]) {
  let calls = 0;
  const read = async () => {
    const answer = answers[Math.min(calls++, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { read, calls: () => calls };
}

describe('reads at a commit id, kept', () => {
  it('reads what a full commit id names once, per worktree and question', async () => {
    const listing = counted('one', 'two');
    expect(await readOnceAtCommit('/repo-a', COMMIT, 'tree', listing.read)).toBe('one');
    expect(await readOnceAtCommit('/repo-a', COMMIT, 'tree', listing.read)).toBe('one');
    expect(listing.calls()).toBe(1);
    expect(await readOnceAtCommit('/repo-b', COMMIT, 'tree', listing.read)).toBe('two');
    expect(listing.calls()).toBe(2);
  });

  it('reads a ref every time: it moves', async () => {
    const listing = counted('one', 'two');
    expect(await readOnceAtCommit('/repo-a', 'main', 'tree', listing.read)).toBe('one');
    expect(await readOnceAtCommit('/repo-a', 'main', 'tree', listing.read)).toBe('two');
  });

  it('keeps a missing file, but not a failure', async () => {
    const missing = counted(undefined, 'late');
    await readOnceAtCommit('/repo-a', COMMIT, 'blob\0gone.txt', missing.read);
    expect(await readOnceAtCommit('/repo-a', COMMIT, 'blob\0gone.txt', missing.read)).toBe(
      undefined,
    );
    const failing = counted(new Error('git died'), 'text');
    await expect(readOnceAtCommit('/repo-a', COMMIT, 'blob\0x', failing.read)).rejects.toThrow();
    expect(await readOnceAtCommit('/repo-a', COMMIT, 'blob\0x', failing.read)).toBe('text');
  });
});
