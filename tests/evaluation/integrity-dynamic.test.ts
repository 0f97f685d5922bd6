import { afterEach, describe, expect, it } from 'vitest';
import { dataOf, textOf } from '../helpers/mcp.js';
import { BROKEN_LIB, BASE_TEST, nodeTask, type NodeTask } from '../helpers/node-task.js';
import {
  BROKEN_CALC,
  GOOD_CALC,
  hasPytest,
  pythonTask,
  type PythonTask,
} from '../helpers/python-task.js';

/**
 * check_test_integrity before any approval: it makes the trusted runs itself (from the latest
 * run_independent_tests run), so an honest test refactor reads as info and the approval goes through,
 * while a test that really went away, or a weakened one hiding a defect, stays must_fix.
 */
let project: PythonTask | NodeTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

async function checkedIntegrity(args: Record<string, unknown> = {}) {
  await project!.call('run_independent_tests', {});
  const result = await project!.call('check_test_integrity', args);
  expect(result.isError, textOf(result)).toBeFalsy();
  return { data: dataOf(result), text: textOf(result) };
}

const PY_BASE_TESTS = [
  'from calc import add',
  '',
  '',
  'def test_add():',
  '    assert add(2, 3) == 5',
  '',
  '',
  'def test_add_negative():',
  '    assert add(-2, -3) == -5',
  '',
].join('\n');
const PY_ONLY_ADD = PY_BASE_TESTS.split('\n\ndef test_add_negative')[0] + '\n';
const PY_ONLY_NEGATIVE =
  'from calc import add\n\n\ndef test_add_negative():\n    assert add(-2, -3) == -5\n';

const PYTHON_REFACTORS: [string, Record<string, string>, string[]][] = [
  [
    'renamed',
    { 'tests/test_calc.py': PY_BASE_TESTS.replace('def test_add()', 'def test_adds_numbers()') },
    ['test_add renamed to test_adds_numbers'],
  ],
  [
    'moved',
    {
      'tests/test_calc.py': PY_ONLY_ADD,
      'tests/test_negative.py':
        'from calc import add\n\n\ndef test_add_negative():\n    assert add(-2, -3) == -5\n',
    },
    ['test_add_negative moved to test_add_negative'],
  ],
  [
    'parametrized',
    {
      'tests/test_calc.py': [
        'import pytest',
        'from calc import add',
        '',
        '',
        '@pytest.mark.parametrize("a, b, total", [(2, 3, 5), (-2, -3, -5)])',
        'def test_sums(a, b, total):',
        '    assert add(a, b) == total',
        '',
      ].join('\n'),
    },
    ['test_add parametrized to test_sums', 'test_add_negative parametrized to test_sums'],
  ],
  [
    'merged into one unittest subTest table',
    {
      'tests/test_calc.py': [
        'import unittest',
        'from calc import add',
        '',
        '',
        'class AddTests(unittest.TestCase):',
        '    def test_sums(self):',
        '        for a, b, total in [(2, 3, 5), (-2, -3, -5)]:',
        '            with self.subTest(a=a, b=b):',
        '                self.assertEqual(add(a, b), total)',
        '',
      ].join('\n'),
    },
    [
      'test_add parametrized to AddTests.test_sums',
      'test_add_negative parametrized to AddTests.test_sums',
    ],
  ],
  [
    'wrapped',
    {
      'tests/test_calc.py': [
        'from calc import add',
        '',
        '',
        'class TestAdd:',
        '    def test_add(self):',
        '        assert add(2, 3) == 5',
        '',
        '    def test_add_negative(self):',
        '        assert add(-2, -3) == -5',
        '',
      ].join('\n'),
    },
    [
      'test_add wrapped to TestAdd.test_add',
      'test_add_negative wrapped to TestAdd.test_add_negative',
    ],
  ],
];

const successors = (findings: Record<string, any>[]) =>
  findings
    .flatMap((finding) => finding.replaced_by ?? [])
    .map((item: Record<string, string>) => `${item.test} ${item.how} to ${item.as}`)
    .sort();

describe.skipIf(!hasPytest)(
  'check_test_integrity judges test refactors by running (pytest installed)',
  () => {
    it.each(PYTHON_REFACTORS)(
      'a %s base test that still passes is info, and the approval goes through',
      async (_how, files, expected) => {
        project = await pythonTask(
          { 'calc.py': GOOD_CALC, ...files },
          { 'tests/test_calc.py': PY_BASE_TESTS },
        );
        const { data, text } = await checkedIntegrity();
        expect(data.dynamic_verdict.state, text).toBe('evaluated');
        expect(data.must_fix, text).toBe(0);
        const gone = data.findings.filter((finding: any) => finding.kind === 'test_deleted');
        expect(gone.length).toBeGreaterThan(0);
        expect(gone.every((finding: any) => finding.severity === 'info')).toBe(true);
        expect(successors(gone)).toEqual(expected);
        const { result, text: verdict } = await project.approve();
        expect(result.isError, verdict).toBeFalsy();
      },
    );

    it("explains a moved test the base's config deselects: it did not run at the base either", async () => {
      const pyproject = [
        '[tool.pytest.ini_options]',
        'testpaths = ["tests"]',
        'pythonpath = ["."]',
        'markers = ["slow: long-running"]',
        'addopts = "-m \'not slow\'"',
        '',
      ].join('\n');
      const slow = '\n\n@pytest.mark.slow\ndef test_add_many():\n    assert add(1, 1) == 2\n';
      project = await pythonTask(
        {
          'calc.py': GOOD_CALC,
          // The slow test moves with one that runs, so the new file still contributes tests.
          'tests/test_calc.py': PY_ONLY_ADD,
          'tests/test_slow.py': `import pytest\n${PY_ONLY_NEGATIVE}${slow}`,
        },
        {
          'pyproject.toml': pyproject,
          'tests/test_calc.py': `import pytest\n${PY_BASE_TESTS}${slow}`,
        },
      );
      const { data, text } = await checkedIntegrity();
      expect(data.dynamic_verdict.state, text).toBe('evaluated');
      // The summary says where the time went: the static reading and the runs, side by side.
      expect(text).toMatch(
        /Took \d+\.\d s: \d+\.\d s reading the changes, \d+\.\d s running the trusted runs/,
      );
      expect(data.took.total_ms).toBeGreaterThanOrEqual(data.took.trusted_runs_ms);
      expect(successors(data.findings)).toEqual([
        'test_add_many moved to test_add_many',
        'test_add_negative moved to test_add_negative',
      ]);
      expect(data.must_fix, text).toBe(0);
      const { result, text: verdict } = await project.approve();
      expect(result.isError, verdict).toBeFalsy();
    });

    it('keeps a deleted base test must_fix (not replaced) until the Coach acknowledges its removal', async () => {
      project = await pythonTask(
        { 'calc.py': GOOD_CALC, 'tests/test_calc.py': PY_ONLY_NEGATIVE },
        { 'tests/test_calc.py': PY_BASE_TESTS },
      );
      const { data, text } = await checkedIntegrity();
      expect(data.dynamic_verdict.state).toBe('evaluated');
      expect(data.must_fix, text).toBe(1);
      expect(data.findings).toContainEqual(
        expect.objectContaining({
          kind: 'test_deleted',
          test: 'test_add',
          severity: 'must_fix',
          not_replaced: ['test_add'],
          trusted_run: expect.objectContaining({ outcome: 'not_replaced' }),
        }),
      );
      expect(text).toMatch(/must_fix test_deleted .*no longer runs `test_add`/);
      const refused = await project.approve();
      expect(refused.result.isError).toBe(true);
      expect(refused.text).toMatch(
        /test_deleted in tests\/test_calc\.py .*no longer runs `test_add`/,
      );
      const acknowledged = await project.approve({
        acknowledged_changes: [
          { test: 'test_add', criterion: 'AC-001', reason: 'covered by the parametrized suite' },
        ],
      });
      expect(acknowledged.result.isError, acknowledged.text).toBeFalsy();
    });

    it('confirms a weakened base test that hides a defect (base_test_fails, must_fix)', async () => {
      project = await pythonTask(
        {
          'calc.py': BROKEN_CALC,
          'tests/test_calc.py': PY_BASE_TESTS.replace('assert add(2, 3) == 5', 'assert add(2, 3)'),
        },
        { 'tests/test_calc.py': PY_BASE_TESTS },
      );
      const { data, text } = await checkedIntegrity();
      expect(data.dynamic_verdict.state).toBe('evaluated');
      expect(data.findings).toContainEqual(
        expect.objectContaining({
          kind: 'base_test_fails',
          severity: 'must_fix',
          file: 'tests/test_calc.py',
          test: 'tests/test_calc.py::test_add',
        }),
      );
      expect(data.must_fix, text).toBeGreaterThanOrEqual(1);
      expect((await project.approve()).result.isError).toBe(true);
    });

    it('says why the findings are static only: no run yet, dynamic: false, no task', async () => {
      project = await pythonTask(
        { 'calc.py': GOOD_CALC, 'tests/test_calc.py': PY_ONLY_ADD },
        { 'tests/test_calc.py': PY_BASE_TESTS },
      );
      const first = await project.call('check_test_integrity', {});
      expect(dataOf(first).dynamic_verdict).toEqual({
        state: 'not_run',
        detail: expect.stringMatching(/^static findings only: .*call run_independent_tests/),
      });
      expect(dataOf(first).must_fix).toBe(1);
      expect(textOf(first)).toMatch(/^Static findings only: /);
      const off = await checkedIntegrity({ dynamic: false });
      expect(off.data.dynamic_verdict.detail).toMatch(/dynamic: false/);
      const noTask = await project.call('check_test_integrity', { task_id: undefined });
      expect(dataOf(noTask).dynamic_verdict.state).toBe('not_run');
    });
  },
);

describe('check_test_integrity judges node --test refactors by running', () => {
  const wrapped = BASE_TEST.replace(
    "test('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));",
    "describe('greet', () => {\n  test('greets by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));\n});",
  );
  // A title built by a template literal (as unjs/ufo's tests are): the run names each case.
  const templated = BASE_TEST.replace(
    "test('greets nobody', () => assert.equal(greet(''), 'Hello, !'));",
    "for (const name of ['Ada', 'Bo']) {\n  test(`greets ${name.trim()} too`, () => assert.ok(greet(name)));\n}",
  );
  const NODE_REFACTORS: [string, Record<string, string>, string[], Record<string, string>?][] = [
    [
      'renamed template-literal title',
      {
        'test/lib.test.js': templated.replace(
          '`greets ${name.trim()} too`',
          '`says hello to ${\n    name.trim()\n  }`',
        ),
      },
      ['greets ${name.trim()} too renamed to says hello to ${name.trim()}'],
      { 'test/lib.test.js': templated },
    ],
    [
      'renamed',
      { 'test/lib.test.js': BASE_TEST.replace("'greets by name'", "'says hello to a name'") },
      ['greets by name renamed to says hello to a name'],
    ],
    [
      'moved',
      {
        'test/lib.test.js': BASE_TEST.replace(/test\('greets nobody'.*\n/, ''),
        'test/nobody.test.js': BASE_TEST.replace(/test\('greets by name'.*\n/, ''),
      },
      ['greets nobody moved to greets nobody'],
    ],
    [
      'wrapped in describe()',
      { 'test/lib.test.js': wrapped },
      ['greets by name wrapped to greet > greets by name'],
    ],
  ];

  it.each(NODE_REFACTORS)(
    'a %s base test that still passes is info, and the approval goes through',
    async (_how, files, expected, base = {}) => {
      project = await nodeTask(files, base);
      const { data, text } = await checkedIntegrity();
      expect(data.dynamic_verdict.state, text).toBe('evaluated');
      expect(data.must_fix, text).toBe(0);
      expect(successors(data.findings)).toEqual(expected);
      const { result, text: verdict } = await project.approve();
      expect(result.isError, verdict).toBeFalsy();
    },
  );

  it('keeps a deleted base test must_fix, and confirms one whose code broke', async () => {
    project = await nodeTask({
      'test/lib.test.js': BASE_TEST.replace(/test\('greets nobody'.*\n/, ''),
    });
    const deleted = await checkedIntegrity();
    expect(deleted.data.findings).toContainEqual(
      expect.objectContaining({
        kind: 'test_deleted',
        test: 'greets nobody',
        severity: 'must_fix',
        trusted_run: expect.objectContaining({ outcome: 'not_replaced' }),
      }),
    );
    expect((await project.approve()).result.isError).toBe(true);
    await project.close();
    project.repo.remove();

    project = await nodeTask({
      'src/lib.js': BROKEN_LIB,
      'test/lib.test.js': BASE_TEST.replace(/test\('greets by name'.*\n/, ''),
    });
    const broken = await checkedIntegrity();
    expect(broken.data.findings).toContainEqual(
      expect.objectContaining({
        kind: 'test_deleted',
        test: 'greets by name',
        severity: 'must_fix',
        trusted_run: expect.objectContaining({ outcome: 'confirmed' }),
      }),
    );
  });
});
