/**
 * Rust `cfg` predicates read by rustc's own grammar (an option `name` or `name = "value"`, and
 * `all(…)`, `any(…)`, `not(…)` of predicates) and judged by what they decide, not by their
 * spelling: `not(not(test))` holds only under test, `any(test, feature = "x")` does not.
 */
export type CfgPredicate =
  { option: string } | { all: CfgPredicate[] } | { any: CfgPredicate[] } | { not: CfgPredicate };

const TOKEN = /\s*(?:(r#)?([A-Za-z_]\w*)|("(?:[^"\\]|\\.)*")|([=,()]))/y;

/** The predicate `text` spells, or undefined when it is not one (a macro argument, a typo). */
export function parseCfg(text: string): CfgPredicate | undefined {
  const tokens: string[] = [];
  let end = 0;
  TOKEN.lastIndex = 0;
  for (let match = TOKEN.exec(text); match; match = TOKEN.exec(text)) {
    tokens.push(match[2] ?? match[3] ?? match[4]!);
    end = TOKEN.lastIndex;
  }
  if (text.slice(end).trim() !== '') return undefined;
  let at = 0;
  const predicate = (): CfgPredicate | undefined => {
    const name = tokens[at++];
    if (name === undefined || !/^[A-Za-z_]/.test(name)) return undefined;
    if (tokens[at] === '=' && tokens[at + 1]?.startsWith('"')) {
      at += 2;
      return { option: `${name}=${tokens[at - 1]}` };
    }
    if (tokens[at] !== '(' || !['all', 'any', 'not'].includes(name)) return { option: name };
    at++;
    const inner: CfgPredicate[] = [];
    while (tokens[at] !== ')') {
      const item = predicate();
      if (!item) return undefined;
      inner.push(item);
      if (tokens[at] === ',') at++;
      else if (tokens[at] !== ')') return undefined;
    }
    at++;
    if (name === 'not') return inner.length === 1 ? { not: inner[0]! } : undefined;
    return name === 'all' ? { all: inner } : { any: inner };
  };
  const parsed = predicate();
  return parsed && at === tokens.length ? parsed : undefined;
}

/** Beyond this many other options the predicate is not enumerated (each doubles the work). */
const MAX_OPTIONS = 12;

/**
 * How `test` decides the predicate, over every setting of its other options: `only` when it
 * never holds without `test` (test-only code), `reads` when some setting holds with `test` and
 * not without it or the other way round, `none` when `test` changes nothing.
 */
export function testDependence(predicate: CfgPredicate): 'only' | 'reads' | 'none' {
  const options = [...optionsOf(predicate)].filter((option) => option !== 'test');
  if (options.length > MAX_OPTIONS) return 'reads';
  let holdsWithout = false;
  let differs = false;
  for (let bits = 0; bits < 2 ** options.length; bits++) {
    const set = new Set(options.filter((_, index) => (bits >> index) & 1));
    const without = holds(predicate, set);
    set.add('test');
    if (without) holdsWithout = true;
    if (without !== holds(predicate, set)) differs = true;
  }
  if (!holdsWithout) return 'only';
  return differs ? 'reads' : 'none';
}

function holds(predicate: CfgPredicate, set: ReadonlySet<string>): boolean {
  if ('option' in predicate) return set.has(predicate.option);
  if ('not' in predicate) return !holds(predicate.not, set);
  if ('all' in predicate) return predicate.all.every((item) => holds(item, set));
  return predicate.any.some((item) => holds(item, set));
}

function optionsOf(predicate: CfgPredicate): Set<string> {
  if ('option' in predicate) return new Set([predicate.option]);
  const inner =
    'not' in predicate ? [predicate.not] : 'all' in predicate ? predicate.all : predicate.any;
  return new Set(inner.flatMap((item) => [...optionsOf(item)]));
}
