import { describe, expect, it } from 'vitest';
import { pythonDoctestExamples } from '../../src/analysis/python-doctests.js';
import { removedExamples } from '../../src/integrity/doctest-examples.js';
import { DEFAULT_SANDBOX_POLICY } from '../../src/config/sandbox-policy.js';

const MODULE = [
  '"""Text helpers.',
  '',
  '>>> 2 * 3',
  '6',
  '"""',
  '',
  'def slug(text):',
  '    """Lower-case, dashes.',
  '',
  '    >>> slug("A B")',
  "    'a-b'",
  '    """',
  '    def inner():',
  '        """>>> not_collected()"""',
  '    return text.lower().replace(" ", "-")',
  '',
  '',
  'class Title:',
  '    @staticmethod',
  '    def of(text):',
  '        """Title case.',
  '',
  '        >>> Title.of("a")',
  "        'A'",
  '        """',
  '        return text.title()',
  '',
  '',
  `__test__ = {"edge": ">>> slug('x  y')\\n'x--y'\\n"}`,
  '',
].join('\n');

const parse = (texts: string[]) => pythonDoctestExamples(texts, 'python3', DEFAULT_SANDBOX_POLICY);

describe("Python doctest examples by doctest's own parser", () => {
  it('reads the places DocTestFinder reads: module, functions, class members, __test__', async () => {
    const [examples] = await parse([MODULE]);
    expect(examples).toEqual([
      { line: 3, owner: '<module>', text: '2 * 3\n=> 6' },
      { line: 10, owner: 'slug', text: 'slug("A B")\n=> \'a-b\'' },
      { line: 23, owner: 'Title.of', text: 'Title.of("a")\n=> \'A\'' },
      { line: 29, owner: '__test__.edge', text: "slug('x  y')\n=> 'x--y'" },
    ]);
  });

  it('names a weakened __test__ entry that no line pattern sees, and not a prose edit', async () => {
    const weakened = MODULE.replace("'x--y'", "'x-y'");
    const prose = MODULE.replace('Lower-case, dashes.', 'Slugs.');
    const [base, now, edited] = await parse([MODULE, weakened, prose]);
    expect(removedExamples('app/text.py', MODULE, weakened)).toEqual([]);
    expect(removedExamples('app/text.py', MODULE, weakened, { base: base!, now: now! })).toEqual([
      { line: 29, owner: '__test__.edge', text: "slug('x  y')\n=> 'x--y'" },
    ]);
    expect(removedExamples('app/text.py', MODULE, prose, { base: base!, now: edited! })).toEqual(
      [],
    );
  });

  it('leaves a module that does not parse to the line pattern', async () => {
    expect(await parse(['def broken(:\n'])).toEqual([undefined]);
  });
});
