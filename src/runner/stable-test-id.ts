/** rustdoc's doctest ids carry the line of their code block: `src/lib.rs - add (line 5)`. */
const DOCTEST_LINE = /^(.* - .*) \(line (\d+)\)$/;

/**
 * Each id's identity across runs of differently laid out trees: a rustdoc doctest is its file and item
 * path plus its occurrence among that item's doctests (`src/lib.rs - add (#1)`), not the line a change
 * above it moves; every other id is itself.
 */
export function stableTestIds(ids: readonly string[]): Map<string, string> {
  const doctests = new Map<string, { id: string; line: number }[]>();
  const stable = new Map<string, string>();
  for (const id of ids) {
    const match = DOCTEST_LINE.exec(id);
    if (!match) {
      stable.set(id, id);
      continue;
    }
    const item = doctests.get(match[1]!) ?? [];
    doctests.set(match[1]!, [...item, { id, line: Number(match[2]) }]);
  }
  for (const [item, found] of doctests) {
    found
      .sort((a, b) => a.line - b.line)
      .forEach(({ id }, index) => stable.set(id, `${item} (#${index + 1})`));
  }
  return stable;
}

/** The tests keyed by their stable id (see stableTestIds). */
export function byStableId<T extends { id: string }>(tests: readonly T[]): Map<string, T> {
  const stable = stableTestIds(tests.map((test) => test.id));
  return new Map(tests.map((test) => [stable.get(test.id)!, test]));
}

/**
 * The ids of `tests` that passed, each as `reference` names the same test (by stable id): a doctest
 * the fail-to-pass run ran at the line the base's file gave it is named as the trusted run names it.
 */
export function passedAsIn(
  tests: readonly { id: string; status: string }[],
  reference: readonly { id: string }[],
): string[] {
  const stable = stableTestIds(tests.map((test) => test.id));
  const named = byStableId(reference);
  return tests
    .filter((test) => test.status === 'passed')
    .map((test) => named.get(stable.get(test.id)!)?.id ?? test.id);
}

/**
 * pytest names a case whose parameters have no printable id by its position (`test_x[case11]`,
 * `test_x[a0-b3]`): the ids of other runs name the same case only if the test has as many cases.
 */
const POSITIONAL_CASE = /^(.*)\[((?:[A-Za-z_]\w*?\d+)(?:-[A-Za-z_]\w*?\d+)*)\]$/;

/**
 * Whether an id of one run names a positional case whose test has a different number of cases in
 * the other (`before`): cases were inserted or removed, so the same id there may be another case.
 */
export function positionMoved(before: readonly string[], after: readonly string[]) {
  const counts = (ids: readonly string[]) => {
    const count = new Map<string, number>();
    for (const id of ids) {
      const test = /^(.*)\[[^\]]*\]$/.exec(id)?.[1];
      if (test !== undefined) count.set(test, (count.get(test) ?? 0) + 1);
    }
    return count;
  };
  const [then, now] = [counts(before), counts(after)];
  return (id: string): boolean => {
    const test = POSITIONAL_CASE.exec(id)?.[1];
    return test !== undefined && then.get(test) !== now.get(test);
  };
}
