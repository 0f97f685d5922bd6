import { describe, expect, it } from 'vitest';
import { checkNamedTest, ranFiles } from '../../src/requirements/failures-only-run.js';

const run = (files: Record<string, string>, failing: string[] = []) => ({
  files: new Map(Object.entries(files)),
  failing,
});
const outcome = (result: ReturnType<typeof checkNamedTest>) =>
  result.ok ? result.id : result.problem;

describe('a test cited by name on a run that names failing tests only', () => {
  it('is found by its title in a test call, with its suite or its file', () => {
    const files = run({
      'test/sum.js': "test('adds', () => {});\nconst math = suite('math');\nmath(`doubles`, f);\n",
    });
    expect(outcome(checkNamedTest('adds', files))).toBe('test/sum.js > adds');
    expect(outcome(checkNamedTest('math > doubles', files))).toBe('test/sum.js > math > doubles');
    expect(outcome(checkNamedTest('sum.js > adds', files))).toBe('test/sum.js > adds');
    expect(outcome(checkNamedTest('other > doubles', files))).toMatch(/no test file .* "doubles"/);
  });

  it('is refused when it failed, is skipped, or another test of its file is focused', () => {
    const files = run(
      {
        'test/a.js': "test('adds', f);\ntest.skip('later', f);\nuvu.test('member', f);\n",
        'test/b.js': "test.only('focused', f);\ntest('left out', f);\n",
      },
      ['math > adds'],
    );
    expect(outcome(checkNamedTest('adds', files))).toBe('test adds failed in the latest run');
    expect(outcome(checkNamedTest('later', files))).toMatch(/declares a test titled "later"/);
    expect(outcome(checkNamedTest('member', files))).toBe('test/a.js > member');
    expect(outcome(checkNamedTest('focused', files))).toBe('test/b.js > focused');
    expect(outcome(checkNamedTest('left out', files))).toMatch(/searched: test\/a.js, test\/b.js/);
  });
});

describe('the files a run named relative to its directory', () => {
  it('are found under the one directory that holds them all, else none', () => {
    const tree = ['test/sum.js', 'test/nested/other.js', 'src/sum.js', 'fixtures/other.js'];
    expect(ranFiles(['nested/other.js', 'sum.js'], tree)).toEqual([
      'test/nested/other.js',
      'test/sum.js',
    ]);
    // `sum.js` is in the root's `src/` and `test/`: either could be what ran.
    expect(ranFiles(['sum.js'], tree)).toEqual([]);
    expect(ranFiles([], tree)).toEqual([]);
  });
});
