import { describe, expect, it } from 'vitest';
import { doctestFindings, removedExamples } from '../../src/integrity/doctest-examples.js';

const PY = [
  'def slug(text):',
  '    """Lower-case, dashes.',
  '',
  '    >>> slug("A B")',
  "    'a-b'",
  '    >>> slug(',
  '    ...     "x")',
  "    'x'",
  '    """',
  '    return text.lower().replace(" ", "-")',
  '',
].join('\n');

const RS = [
  '/// Adds.',
  '///',
  '/// ```',
  '/// assert_eq!(calc::add(2, 3), 5);',
  '/// ```',
  '#[inline]',
  'pub fn add(a: i32, b: i32) -> i32 {',
  '    a + b',
  '}',
].join('\n');

describe('doctest examples', () => {
  it('finds a changed Python example (expected output) and nothing for code or prose edits', () => {
    const changed = PY.replace("'a-b'", "'A-B'");
    expect(removedExamples('app/text.py', PY, changed)).toEqual([
      { line: 4, owner: 'slug', text: 'slug("A B")\n=> \'a-b\'' },
    ]);
    const prose = PY.replace('Lower-case, dashes.', 'Slugs.').replace('.lower()', '.casefold()');
    expect(removedExamples('app/text.py', PY, prose)).toEqual([]);
  });

  it('finds a changed Rust doc test, named by the item it documents', () => {
    const changed = RS.replace('), 5);', '), 6);');
    expect(removedExamples('src/lib.rs', RS, changed)).toMatchObject([{ line: 3, owner: 'add' }]);
  });

  it('reports only where the base runs the doctests', () => {
    const file = { path: 'app/text.py', base: PY, now: PY.replace("'a-b'", "'A-B'") };
    expect(doctestFindings([file], { python: false, rust: true })).toEqual([]);
    expect(doctestFindings([file], { python: true, rust: false })).toMatchObject([
      { kind: 'doctest_changed', severity: 'must_fix', file: 'app/text.py', line: 4, test: 'slug' },
    ]);
  });
});
