import type { TestCaseResult } from './report/types.js';

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

/** A run's test as matching reads it. */
type Identified = Pick<TestCaseResult, 'id' | 'case'>;

/** How the tests of one run find the same tests in another (see sameTestsIn). */
export interface SameTests<T> {
  /** The test of the other run that is this test of the first, if it ran there. */
  of(test: Identified): T | undefined;
  /** Whether the test is matched by its parameter values rather than by its id. */
  byValues(test: Identified): boolean;
}

/**
 * How the tests of `from` find the same tests in `to`: a parametrized case by its test function and
 * parameter values wherever both runs report the values of every case of that function and no two
 * of its cases share them (a case inserted mid-list moves the later cases' positional ids,
 * `case11`, not their values); every other test by its stable id (stableTestIds). A case no case
 * of the other run shares values with is paired by id with the case of that id there when that
 * one is unpaired too: its values come from code a change moved (a constant of the product's), not
 * its place. `ids` pairs by stable id alone: for two runs of the same test files (the baseline
 * and the trusted run), whose ids name the same cases whatever values they compute.
 */
export function sameTestsIn<T extends Identified>(
  from: readonly Identified[],
  to: readonly T[],
  pairing: 'values' | 'ids' = 'values',
): SameTests<T> {
  const valued = pairing === 'ids' ? new Set<string>() : fullyValued(from);
  const inBoth = new Set([...fullyValued(to)].filter((name) => valued.has(name)));
  const byValues = (test: Identified) => test.case !== undefined && inBoth.has(test.case.function);
  const [fromStable, toStable] = [from, to].map((tests) => stableTestIds(tests.map((t) => t.id)));
  const valuesKey = (test: Identified) => `${test.case!.function}\0${test.case!.values}`;
  const byKey = new Map(
    to.map((test) => [byValues(test) ? valuesKey(test) : toStable!.get(test.id), test]),
  );
  const byId = new Map(to.map((test) => [toStable!.get(test.id), test]));
  const paired = new Set(from.filter(byValues).map((test) => byKey.get(valuesKey(test))));
  const leftOver = (test: Identified) => {
    const other = byId.get(fromStable!.get(test.id));
    return other && byValues(other) && !paired.has(other) ? other : undefined;
  };
  return {
    of: (test) =>
      byValues(test)
        ? (byKey.get(valuesKey(test)) ?? leftOver(test))
        : byKey.get(fromStable!.get(test.id)),
    byValues,
  };
}

/**
 * The test functions of a run whose every case carries its values, no two cases the same ones: a
 * case without values (a value with no plain structure) or two alike leave the function's cases
 * to their ids.
 */
function fullyValued(tests: readonly Identified[]): Set<string> {
  const seen = new Map<string, Map<string, string>>();
  const spoiled = new Set<string>();
  for (const { id, case: parametrized } of tests) {
    if (!parametrized) continue;
    const cases = seen.get(parametrized.function) ?? new Map<string, string>();
    seen.set(parametrized.function, cases);
    if ((cases.get(parametrized.values) ?? id) !== id) spoiled.add(parametrized.function);
    cases.set(parametrized.values, id);
  }
  for (const { id, case: parametrized } of tests) {
    if (parametrized) continue;
    for (let at = id.indexOf('['); at > 0; at = id.indexOf('[', at + 1)) {
      if (seen.has(id.slice(0, at))) spoiled.add(id.slice(0, at));
    }
  }
  return new Set([...seen.keys()].filter((name) => !spoiled.has(name)));
}

/**
 * The ids of `tests` that passed, each as `reference` names the same test (by stable id): a doctest
 * the fail-to-pass run ran at the line the base's file gave it is named as the trusted run names it.
 * Not by values: the Player's parametrized cases keep the Player's ids, which the Coach cites.
 */
export function passedAsIn(
  tests: readonly (Identified & { status: string })[],
  reference: readonly Identified[],
): string[] {
  const same = sameTestsIn(tests, reference, 'ids');
  return tests
    .filter((test) => test.status === 'passed')
    .map((test) => same.of(test)?.id ?? test.id);
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
