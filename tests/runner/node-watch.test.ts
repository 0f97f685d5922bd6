import { describe, expect, it } from 'vitest';
import { HARNESS_CHANGED } from '../../src/runner/harness-case.js';
import { nodeWatchCases } from '../../src/runner/node-watch.js';

const passed = (nodeid: string) => ({
  nodeid,
  op: 'deepStrictEqual',
  type: 'Money',
  type_file: 'src/money.js',
  file: 'test/money.test.js',
  line: 4,
  left: "{ '#cents': 4 }",
  right: "{ '#cents': 3 }",
});

describe('nodeWatchCases: what the node watch saw, as cases of the run', () => {
  it("names a product end by file and line; a test's own end is the test's business", () => {
    const cases = nodeWatchCases({
      ends: [
        { call: 'process.exit(0)', file: 'src/text.js', line: 5, nodeid: 'slug' },
        { call: 'process.exit(1)', file: 'test/text.test.js', line: 2, nodeid: null },
      ],
      equalities: [],
      matchers: [],
    });
    expect(cases).toEqual([
      {
        id: 'coachgate: process ended at src/text.js:5',
        status: 'error',
        message: expect.stringMatching(
          /^process\.exit\(0\) at src\/text\.js:5 ended the test process while slug ran/,
        ),
      },
    ]);
  });

  it('puts rewritten matchers and each test and type first in one harness case', () => {
    const [found] = nodeWatchCases({
      ends: [],
      equalities: [passed('total'), passed('amount')],
      matchers: [
        {
          api: 'chai.Assertion.overwriteMethod',
          name: 'equal',
          file: 'src/money.js',
          line: 3,
          nodeid: null,
        },
      ],
    });
    expect(found).toMatchObject({ id: HARNESS_CHANGED, status: 'error' });
    expect(found!.message).toMatch(
      /^chai\.Assertion\.overwriteMethod\("equal"\) from src\/money\.js:3 \(a changed product file\) as the tests loaded: .* 2 comparisons passed only by the equality of a type from a changed file: total \(Money, src\/money\.js\), amount \(Money, src\/money\.js\)\. The first: total passed `deepStrictEqual` at test\/money\.test\.js:4/,
    );
  });
});
