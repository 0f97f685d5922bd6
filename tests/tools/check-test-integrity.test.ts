import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, SAMPLE_TASK, type TempRepo } from '../helpers/git-repo.js';

let repo: TempRepo;
afterEach(() => repo?.remove());

const PY_TESTS =
  'from app import add\n\ndef test_add():\n    assert add(1, 2) == 3\n\ndef test_negative():\n    assert add(-1, -2) == -3\n    assert add(-1, 1) == 0\n';
const TS_TESTS =
  "import { test, expect } from 'vitest';\nimport { add } from '../src/add';\n\ntest('adds', () => {\n  expect(add(1, 2)).toBe(3);\n});\n\ntest('adds negatives', () => {\n  expect(add(-1, -2)).toBe(-3);\n});\n";

async function check(args: Record<string, unknown> = {}) {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    return await callTool(client, 'check_test_integrity', { worktree: repo.dir, ...args });
  } finally {
    await close();
  }
}

describe('check_test_integrity through MCP', () => {
  it('flags a skip, a deleted test and an edited task file in an uncommitted Python change', async () => {
    repo = makeRepo({
      '.guardkit/tasks/TASK-001.md': SAMPLE_TASK,
      'app/__init__.py': 'def add(a, b):\n    return a + b\n',
      'tests/test_add.py': PY_TESTS,
    });
    repo.git('checkout', '-q', '-b', 'autobuild/TASK-001');
    repo.write(
      'tests/test_add.py',
      'import pytest\nfrom app import add\n\n@pytest.mark.skip(reason="flaky")\ndef test_add():\n    assert add(1, 2) == 3\n',
    );
    repo.write(
      '.guardkit/tasks/TASK-001.md',
      SAMPLE_TASK.replace('- [ ] Tests cover both cases\n', ''),
    );
    const result = await check({ task_id: 'TASK-001' });
    const data = dataOf(result);
    const kinds = data.findings.map(
      (finding: { kind: string; severity: string }) => `${finding.kind}:${finding.severity}`,
    );
    expect(kinds).toEqual(
      expect.arrayContaining([
        'skip_added:must_fix',
        'test_deleted:must_fix',
        'task_file_modified:must_fix',
      ]),
    );
    expect(data.must_fix).toBeGreaterThanOrEqual(3);
    expect(textOf(result)).toMatch(/must_fix skip_added tests\/test_add\.py:4/);
  });

  it('flags deleted and rewritten case files a data-driven base test reads (tests/cases/*.in, *.out)', async () => {
    repo = makeRepo({
      'app/__init__.py': 'def shout(text):\n    return text.upper()\n',
      'tests/test_cases.py':
        'import pathlib, pytest\nfrom app import shout\n\nCASES = sorted(pathlib.Path(__file__).parent.glob("cases/*.in"))\n\n' +
        '@pytest.mark.parametrize("case", CASES, ids=lambda p: p.stem)\ndef test_case(case):\n' +
        '    assert shout(case.read_text()) == case.with_suffix(".out").read_text()\n',
      'tests/cases/hello.in': 'hello',
      'tests/cases/hello.out': 'HELLO',
      'tests/cases/mixed.in': 'MiXeD',
      'tests/cases/mixed.out': 'MIXED',
      'tests/cases/empty.in': '',
      'tests/cases/empty.out': '',
    });
    repo.git('checkout', '-q', '-b', 'feature');
    repo.git('rm', '-q', 'tests/cases/mixed.in', 'tests/cases/mixed.out');
    repo.write('tests/cases/hello.out', 'hello');
    repo.commit('drop a case, rewrite an expected output');
    const data = dataOf(await check());
    expect(data.findings).toEqual([
      // Sorted by file, then detail.
      {
        kind: 'test_data_changed',
        severity: 'should_fix',
        file: 'tests/cases',
        detail: expect.stringMatching(/^1 test data file\(s\) .* rewritten \(hello\.out\)/),
      },
      {
        kind: 'test_data_changed',
        severity: 'must_fix',
        file: 'tests/cases',
        detail: expect.stringMatching(
          /^2 test data file\(s\) .* deleted \(mixed\.in, mixed\.out\)/,
        ),
      },
    ]);
    expect(data.files_checked).toEqual(
      expect.arrayContaining(['tests/cases/mixed.in', 'tests/cases/hello.out']),
    );
  });

  it('flags a focused TS test committed on the branch', async () => {
    repo = makeRepo({
      'src/add.ts': 'export const add = (a: number, b: number) => a + b;\n',
      'test/add.test.ts': TS_TESTS,
    });
    repo.git('checkout', '-q', '-b', 'feature');
    repo.write('test/add.test.ts', TS_TESTS.replace("test('adds',", "test.only('adds',"));
    repo.commit('focus');
    const data = dataOf(await check());
    expect(data.findings).toEqual([
      expect.objectContaining({
        kind: 'focus_added',
        severity: 'must_fix',
        file: 'test/add.test.ts',
        line: 4,
      }),
    ]);
  });

  it('finds nothing to fix in an honest change: new tests, new code, a refactor that keeps assertions', async () => {
    repo = makeRepo({
      'app/__init__.py': 'def add(a, b):\n    return a + b\n',
      'tests/test_add.py': PY_TESTS,
    });
    repo.git('checkout', '-q', '-b', 'feature');
    repo.write(
      'app/__init__.py',
      'def add(a, b):\n    return sum((a, b))\n\ndef sub(a, b):\n    return a - b\n',
    );
    repo.write(
      'tests/test_add.py',
      PY_TESTS.replace('from app import add', 'from app import add, sub') +
        '\ndef test_sub():\n    assert sub(3, 1) == 2\n',
    );
    repo.write(
      'tests/test_more.py',
      'from app import sub\n\ndef test_sub_zero():\n    assert sub(0, 0) == 0\n',
    );
    const result = await check();
    expect(
      dataOf(result).findings.filter(
        (finding: { severity: string }) => finding.severity === 'must_fix',
      ),
    ).toEqual([]);
    expect(textOf(result)).toMatch(/No test-integrity findings/);
  });

  it('refuses a base ref that does not exist', async () => {
    repo = makeRepo({ 'README.md': 'x' });
    const result = await check({ base: 'no-such-branch' });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/does not name a commit/);
  });

  it("lists a site hook in the project's own virtualenv and a conftest.py in an ignored directory", async () => {
    repo = makeRepo({
      '.gitignore': '.venv/\nlocal/\n',
      'app/__init__.py': 'def add(a, b):\n    return a + b\n',
      'tests/test_add.py': PY_TESTS,
    });
    const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], {
      encoding: 'utf8',
    }).trim();
    mkdirSync(path.join(repo.dir, '.venv/bin'), { recursive: true });
    symlinkSync(python, path.join(repo.dir, '.venv/bin/python'));
    repo.write('.venv/lib/python3.11/site-packages/zz_patch.pth', 'import os\n');
    repo.write('.venv/lib/python3.11/site-packages/plain.pth', '/opt/lib\n');
    repo.write(
      'local/tests/conftest.py',
      'def pytest_collection_modifyitems(items):\n    items.clear()\n',
    );
    const data = dataOf(await check());
    expect(
      data.findings
        .filter((finding: { kind: string }) => finding.kind === 'hidden_from_git')
        .map((finding: { file: string }) => finding.file)
        .sort(),
    ).toEqual(['.venv/lib/python3.11/site-packages/zz_patch.pth', 'local/tests/conftest.py']);
  });
});

describe("check_test_integrity runs python's ast under the base's sandbox policy", () => {
  it.skipIf(process.platform !== 'linux')(
    'sandbox mode required on a machine without a sandbox: python3 is not run, the line scan says why',
    async () => {
      const { forgetSandboxDetection } = await import('../../src/sandbox/backend.js');
      const skipAdded =
        'import pytest\nfrom app import add\n\n@pytest.mark.skip(reason="flaky")\ndef test_add():\n    assert add(1, 2) == 3\n';
      const detailOfSkip = async () => {
        repo.write('tests/test_add.py', skipAdded);
        const data = dataOf(await check());
        return data.findings.find((finding: { kind: string }) => finding.kind === 'skip_added')
          ?.detail as string;
      };
      const saved = process.env.COACHGATE_BWRAP;
      process.env.COACHGATE_BWRAP = '/nonexistent/bwrap';
      forgetSandboxDetection();
      try {
        repo = makeRepo({
          '.guardkit/config.yaml': 'coachgate:\n  sandbox:\n    mode: required\n',
          'app/__init__.py': 'def add(a, b):\n    return a + b\n',
          'tests/test_add.py': PY_TESTS,
        });
        expect(await detailOfSkip()).toMatch(
          /\[found by a line scan because python3 was not run: Refusing to run: the base config \(or --sandbox\) requires a sandbox/,
        );
        repo.remove();
        // The same machine, a base without the setting (auto): python3 runs, unsandboxed and said so.
        repo = makeRepo({
          'app/__init__.py': 'def add(a, b):\n    return a + b\n',
          'tests/test_add.py': PY_TESTS,
        });
        expect(await detailOfSkip()).not.toMatch(/line scan/);
      } finally {
        if (saved === undefined) delete process.env.COACHGATE_BWRAP;
        else process.env.COACHGATE_BWRAP = saved;
        forgetSandboxDetection();
      }
    },
  );
});
