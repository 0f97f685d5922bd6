/**
 * Reads of what a full commit id names (its tree listing, a file's blob) never change, and an approval
 * made them again and again: the snapshots, the selection, the trusted config and the changed-file
 * checks each asked git for the base's listing, a dozen git processes per turn for one answer. They are
 * kept here per worktree and commit, the least recently used dropped past a bound on their size. A ref
 * (`main`, `HEAD`) is never kept: it moves.
 */
const FULL_COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;
/** Characters kept in all (a 100,000-file listing is about 10 MB). */
const KEPT_CHARACTERS = 64 * 1024 * 1024;

interface Kept {
  value: Promise<string | undefined>;
  size: number;
}

const kept = new Map<string, Kept>();
let keptSize = 0;

/**
 * `read()`'s answer for `what` at `commit` in `worktree`, read once while it is kept. An answer of
 * undefined (a file the commit does not have) is kept too; a failure is not.
 */
export function readOnceAtCommit(
  worktree: string,
  commit: string,
  what: string,
  read: () => Promise<string | undefined>,
): Promise<string | undefined> {
  if (!FULL_COMMIT_ID.test(commit)) return read();
  const key = `${worktree}\0${commit}\0${what}`;
  const hit = kept.get(key);
  if (hit) {
    // Most recently used last: eviction takes from the front.
    kept.delete(key);
    kept.set(key, hit);
    return hit.value;
  }
  const entry: Kept = { value: read(), size: 0 };
  kept.set(key, entry);
  entry.value.then(
    (text) => {
      if (kept.get(key) !== entry) return;
      entry.size = text?.length ?? 0;
      keptSize += entry.size;
      evict();
    },
    () => {
      if (kept.get(key) === entry) kept.delete(key);
    },
  );
  return entry.value;
}

function evict(): void {
  for (const [key, entry] of kept) {
    if (keptSize <= KEPT_CHARACTERS) return;
    kept.delete(key);
    keptSize -= entry.size;
  }
}
