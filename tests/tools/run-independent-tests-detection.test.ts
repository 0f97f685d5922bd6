import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';

/** The test command found from the files alone: a pytest project without a manifest. */
let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

async function run(files: Record<string, string>) {
  const repo = makeRepo(files);
  repos.push(repo);
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    return await callTool(client, 'run_independent_tests', {
      worktree: repo.dir,
      task_id: 'TASK-1',
      timeout_s: 120,
    });
  } finally {
    await close();
  }
}

const PASSING = 'def test_adds():\n    assert 1 + 1 == 2\n';

describe('run_independent_tests finds a pytest project by its test files', () => {
  it.each([
    ['testing/', { 'testing/conftest.py': '', 'testing/test_sum.py': PASSING }],
    ['_pytest/', { 'tool.py': 'X = 1\n', '_pytest/sum_test.py': PASSING }],
  ])(
    'tests in %s, no manifest: pytest, naming the folder',
    async (folder, files) => {
      const data = dataOf(await run(files));
      expect(data.detected_by).toMatch(`→ pytest (tests found in ${folder})`);
      expect(data).toMatchObject({
        status: 'passed',
        counts: { total: 1, passed: 1 },
      });
    },
    120_000,
  );

  it('test files inside a virtual environment or a vendored tree do not make a pytest project', async () => {
    const result = await run({
      'env/pyvenv.cfg': 'home = /usr/bin\n',
      'env/lib/test_site.py': PASSING,
      'vendor/lib/test_vendored.py': PASSING,
      'node_modules/pkg/conftest.py': '',
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/No test command found/);
  }, 120_000);

  it('a project with a manifest keeps its runner when a helper script is named test_*.py', async () => {
    const data = dataOf(
      await run({
        'package.json': JSON.stringify({ scripts: { test: 'node --test' } }),
        'scripts/test_fixtures.py': 'print("fixtures")\n',
        'test/sum.test.js': "require('node:test')('adds', () => {});\n",
      }),
    );
    expect(data.detected_by).toMatch(/→ node --test$/);
    expect(data.status).toBe('passed');
  }, 120_000);
});
