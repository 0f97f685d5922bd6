/** Beyond this many line pairs the middle of a change is not diffed: all of it counts as changed. */
const PAIR_LIMIT = 4_000_000;

/**
 * The 1-based lines of `now` that the change added or rewrote, by a longest common subsequence of
 * lines (beside a deletion, both neighbouring lines); undefined when every line is the Player's (a
 * file the base did not have). What only widens on a large rewrite: the middle between the common
 * head and tail is taken whole when it is too large to diff.
 */
export function changedLines(base: string | undefined, now: string): number[] | undefined {
  if (base === undefined) return undefined;
  const before = base.split(/\r?\n/);
  const after = now.split(/\r?\n/);
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head += 1;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail += 1;
  const removed = before.slice(head, before.length - tail);
  const added = after.slice(head, after.length - tail);
  const changed = new Set<number>();
  const mark = (index: number) => {
    if (index >= 0 && index < after.length) changed.add(index + 1);
  };
  if (removed.length * added.length > PAIR_LIMIT) {
    for (let index = head - 1; index <= after.length - tail; index += 1) mark(index);
  } else {
    const changes = middleChanges(removed, added);
    const inserted = new Set(changes.filter(([, deletion]) => !deletion).map(([index]) => index));
    for (const [index, deletion] of changes) {
      if (!deletion) mark(head + index);
      // A line removed where none was written (a rewrite marks its new lines only).
      else if (!inserted.has(index) && !inserted.has(index - 1)) {
        mark(head + index - 1);
        mark(head + index);
      }
    }
  }
  return [...changed].sort((a, b) => a - b);
}

/**
 * The lines of `added` outside the longest common subsequence with `removed`, and the places in
 * `added` (the index the next kept line has) where lines of `removed` were dropped.
 */
function middleChanges(removed: string[], added: string[]): Array<[number, boolean]> {
  const width = added.length + 1;
  const lengths = new Uint32Array((removed.length + 1) * width);
  for (let i = removed.length - 1; i >= 0; i -= 1)
    for (let j = added.length - 1; j >= 0; j -= 1)
      lengths[i * width + j] =
        removed[i] === added[j]
          ? lengths[(i + 1) * width + j + 1]! + 1
          : Math.max(lengths[(i + 1) * width + j]!, lengths[i * width + j + 1]!);
  const changes: Array<[number, boolean]> = [];
  let i = 0;
  let j = 0;
  while (i < removed.length || j < added.length) {
    if (i < removed.length && j < added.length && removed[i] === added[j]) {
      i += 1;
      j += 1;
    } else if (
      j < added.length &&
      (i === removed.length || lengths[i * width + j + 1]! >= lengths[(i + 1) * width + j]!)
    ) {
      changes.push([j, false]);
      j += 1;
    } else {
      changes.push([j, true]);
      i += 1;
    }
  }
  return changes;
}
