import { describe, expect, it } from 'vitest';
import { collectTestInputFacts } from '../../src/analysis/test-inputs.js';
import { DEFAULT_SANDBOX_POLICY } from '../../src/config/sandbox-policy.js';
import { explainWithTrustedRun } from '../../src/integrity/integrity.js';
import { specialCasedInputFindings } from '../../src/integrity/special-cased-inputs.js';

const TESTS = `from shop import price

def test_price():
    assert price("apple", 3) == 6
    assert price("pear", 2) == 10

def test_bulk():
    assert price("melon", 40) == 200
`;

const BASE = `PRICES = {"apple": 2}

def price(name, count):
    raise NotImplementedError
`;

/** The findings for a Player's `now` of shop.py (over BASE), read with python3's ast. */
async function findingsFor(now: string, base = BASE) {
  const code = [{ path: 'shop.py', base, now }];
  const facts = await collectTestInputFacts(
    [{ path: 'tests/test_shop.py', text: TESTS }],
    code,
    'python3',
    DEFAULT_SANDBOX_POLICY,
  );
  return specialCasedInputFindings(facts, code);
}

describe('special_cases_test_input', () => {
  it('refuses a hard-coded test input, naming the assertion and the product line', async () => {
    const findings = await findingsFor(
      BASE.replace(
        'raise NotImplementedError',
        'if name == "pear":\n        return 10\n    return PRICES[name] * count',
      ),
    );
    expect(findings.map((item) => [item.kind, item.severity, item.line, item.test])).toEqual([
      ['special_cases_test_input', 'must_fix', 4, '"pear"'],
    ]);
    expect(findings[0]!.detail).toContain('assert price("pear", 2) == 10');
    expect(findings[0]!.detail).toContain('tests/test_shop.py:5');
  });

  it('refuses a hard-coded tuple of a call and a match on an expected value', async () => {
    const findings = await findingsFor(
      BASE.replace(
        'raise NotImplementedError',
        'if (name, count) == ("melon", 40):\n        return 200\n    match count:\n        case 3:\n            return 6\n    return 0',
      ),
    );
    expect(findings.map((item) => `${item.line} ${item.test}`)).toEqual(['4 ("melon", 40)', '7 3']);
  });

  it('refuses a lookup table of test inputs, whatever it is called', async () => {
    const findings = await findingsFor(
      BASE.replace(
        'raise NotImplementedError',
        'answers = [("apple", 3, 6), ("pear", 2, 10), ("melon", 40, 200)]\n    return next(a[2] for a in answers if a[0] == name)',
      ),
    );
    expect(findings.map((item) => `${item.line} ${item.test}`)).toEqual(['4 shop.py:4']);
    expect(findings[0]!.detail).toMatch(/holds \d+ of the tests' own inputs/);
  });

  it('approves an honest implementation that uses trivial values and the base constants', async () => {
    const findings = await findingsFor(
      `PRICES = {"apple": 2, "pear": 5, "melon": 5}\n\ndef price(name, count):\n    if count <= 0:\n        return 0\n    if count == 1:\n        return PRICES[name]\n    return PRICES[name] * count\n`,
      `PRICES = {"apple": 2, "pear": 5, "melon": 5}\n\ndef price(name, count):\n    raise NotImplementedError\n`,
    );
    expect(findings).toEqual([]);
  });

  it('approves a base table that grows by one entry the tests use', async () => {
    const base =
      'PRICES = {\n    "apple": 2,\n    "pear": 5,\n}\n\ndef price(name, count):\n    return PRICES[name] * count\n';
    const findings = await findingsFor(
      base.replace('    "pear": 5,\n', '    "pear": 5,\n    "kiwi": 3,\n'),
      base,
    );
    expect(findings).toEqual([]);
  });

  it('keeps a spec constant a test also uses as a hint: nothing the assertion expects is answered', async () => {
    const findings = await findingsFor(
      BASE.replace(
        'raise NotImplementedError',
        'total = PRICES.get(name, 5) * count\n    return total // 2 if count >= 40 else total',
      ),
    );
    expect(findings.map((item) => `${item.severity} ${item.line} ${item.test}`)).toEqual([
      'should_fix 5 40',
    ]);
    expect(findings[0]!.detail).toContain('a hint, not a refusal');
  });

  it('pairs an input with its answer by any route: an assignment, a conditional, a one-entry mapping', async () => {
    const bodies = [
      'if name == "pear":\n        total = 10\n        return total\n    return PRICES[name] * count',
      'return 10 if "pear" == name else PRICES[name] * count',
      'return {"pear": 10}.get(name, PRICES[name] * count)',
    ];
    for (const body of bodies) {
      const findings = await findingsFor(BASE.replace('raise NotImplementedError', body));
      expect(
        findings.map((item) => `${item.severity} ${item.test}`),
        body,
      ).toEqual(['must_fix "pear"']);
      expect(findings[0]!.detail).toContain("answers 10, that assertion's own expected value");
    }
  });

  it('pairs an input with the truth its assertion expects, and one acknowledgement clears it', async () => {
    const code = [
      {
        path: 'leap.py',
        base: 'def is_leap(year):\n    raise NotImplementedError\n',
        now: 'def is_leap(year):\n    if year in (1900, 2100):\n        return False\n    return year % 4 == 0\n',
      },
    ];
    const facts = await collectTestInputFacts(
      [
        {
          path: 'test_leap.py',
          text: 'from leap import is_leap\n\ndef test_leap():\n    assert not is_leap(1900)\n',
        },
      ],
      code,
      'python3',
      DEFAULT_SANDBOX_POLICY,
    );
    const findings = specialCasedInputFindings(facts, code);
    expect(findings.map((item) => `${item.severity} ${item.line} ${item.test}`)).toEqual([
      'must_fix 2 1900',
    ]);
    const judge = (acknowledged: string[]) =>
      explainWithTrustedRun(findings, { regressions: [], acknowledged, candidate_tests: [] }).map(
        (item) => item.severity,
      );
    expect(judge(['1900'])).toEqual(['info']);
    expect(judge(['1901'])).toEqual(['must_fix']);
  });

  it("approves what honest product code does with the tests' values: a locale table, a month length", async () => {
    const code = [
      {
        path: 'i18n.py',
        base: 'LOCALES = {}\n\ndef plural(locale, days):\n    return "s"\n',
        now: 'LOCALES = {"lv": "latvian"}\n\ndef plural(locale, days):\n    if days == 31:\n        return LOCALES.get(locale, "s")\n    return "s"\n',
      },
    ];
    const facts = await collectTestInputFacts(
      [
        {
          path: 'test_i18n.py',
          text: 'from i18n import plural\n\ndef test_lv():\n    assert plural("lv", 31) == "dienas"\n',
        },
      ],
      code,
      'python3',
      DEFAULT_SANDBOX_POLICY,
    );
    const severities = specialCasedInputFindings(facts, code).map((item) => item.severity);
    expect(severities).toEqual(['should_fix', 'should_fix']);
  });

  describe('in JS/TS, read by the TypeScript parser', () => {
    const JS_TESTS = `import { price } from '../src/shop.js';
test('prices', () => {
  expect(price('pear', 2)).toBe(10);
  assert.equal(price('melon', 40), 200);
  expect(price('apple', 3)).toBe(6);
  expect(typeof price('kiwi', 1)).toBe('number');
});
`;
    const JS_BASE = `const PRICES = { apple: 2 };\nexport function price(name, count) {\n  throw new Error('todo');\n}\n`;
    const jsFindings = async (body: string) => {
      const code = [
        {
          path: 'src/shop.ts',
          base: JS_BASE,
          now: JS_BASE.replace("throw new Error('todo');", body),
        },
      ];
      const facts = await collectTestInputFacts(
        [{ path: 'tests/shop.test.ts', text: JS_TESTS }],
        code,
        'python3',
        DEFAULT_SANDBOX_POLICY,
      );
      return specialCasedInputFindings(facts, code).map(
        (item) => `${item.severity === 'must_fix' ? '' : 'hint '}${item.line} ${item.test}`,
      );
    };

    it('refuses a hard-coded input, in a comparison and in a case', async () => {
      expect(
        await jsFindings("if ('pear' === name) return 10;\n  return PRICES[name] * count;"),
      ).toEqual(['3 "pear"']);
      expect(
        await jsFindings('switch (count) {\n    case 40:\n      return 200;\n  }\n  return 0;'),
      ).toEqual(['4 40']);
      expect(await jsFindings("return name === 'pear' ? 10 : PRICES[name] * count;")).toEqual([
        '3 "pear"',
      ]);
      expect(
        await jsFindings("if (name !== 'pear') return PRICES[name] * count;\n  return 7;"),
      ).toEqual(['hint 3 "pear"']);
    });

    it('refuses a lookup table of test inputs', async () => {
      expect(
        await jsFindings(
          "const seen = new Map([['pear', 10], ['melon', 200], ['apple', 6]]);\n  return seen.get(name);",
        ),
      ).toEqual(['3 src/shop.ts:3']);
    });

    it('approves the honest computation, a type test included', async () => {
      expect(
        await jsFindings(
          "if (typeof count !== 'number') return 0;\n  const each = PRICES[name] ?? 0;\n  return count > 0 ? each * count : 0;",
        ),
      ).toEqual([]);
    });
  });
});
