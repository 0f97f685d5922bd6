import { existsSync, readFileSync, statSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { callTool, connect, dataOf, textOf } from '../helpers/mcp.js';
import { makeRepo, type TempRepo } from '../helpers/git-repo.js';
import { loginShellProgram } from '../../src/runner/platform.js';

let repos: TempRepo[] = [];
afterEach(() => {
  repos.forEach((repo) => repo.remove());
  repos = [];
});

function project(files: Record<string, string>): TempRepo {
  const repo = makeRepo({ '.gitignore': '.venv/\nnode_modules/\n', ...files });
  repos.push(repo);
  return repo;
}

async function run(repo: TempRepo, args: Record<string, unknown> = {}) {
  const { client, close } = await connect({ roots: [repo.dir] });
  try {
    return await callTool(client, 'run_independent_tests', { worktree: repo.dir, task_id: 'TASK-1', ...args });
  } finally {
    await close();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const PASSING = 'from app.greet import greet\n\ndef test_greets():\n    assert greet("Ada") == "Hello, Ada!"\n';

describe('run_independent_tests with pytest', () => {
  it('passes a green suite, stores the run and its log, and reports per-test ids', async () => {
    const repo = project({ 'pyproject.toml': '[project]\nname = "demo"\n', 'app/__init__.py': '', 'app/greet.py': 'def greet(n):\n    return f"Hello, {n}!"\n', 'tests/test_greet.py': PASSING });
    const result = await run(repo);
    const data = dataOf(result);
    expect(data).toMatchObject({ status: 'passed', failure_class: 'none', exit_code: 0, tree_clean: true, detected_by: 'pyproject.toml → pytest' });
    expect(data.command.slice(0, 3)).toEqual(['python3', '-m', 'pytest']);
    expect(data.tests).toEqual([{ id: 'tests/test_greet.py::test_greets', status: 'passed' }]);
    expect(data.counts).toMatchObject({ total: 1, passed: 1, failed: 0 });
    const stored = JSON.parse(readFileSync(path.join(repo.dir, '.guardkit/autobuild/TASK-1/runs', `${data.run_id}.json`), 'utf8'));
    expect(stored.tree_hash).toBe(data.tree_hash);
    expect(readFileSync(data.log_path, 'utf8')).toMatch(/1 passed/);
    expect(textOf(result)).toMatch(/^PASSED: 1 passed, 0 failed/);
  });

  it('puts the first assertion error and the result line in the summary', async () => {
    const repo = project({ 'app/__init__.py': '', 'app/greet.py': 'def greet(n):\n    return f"Hi, {n}"\n', 'tests/test_greet.py': PASSING });
    const data = dataOf(await run(repo));
    expect(data.status).toBe('failed');
    expect(data.failure_class).toBe('code');
    expect(data.summary).toMatch(/E\s+AssertionError|E\s+assert 'Hi, Ada' == 'Hello, Ada!'/);
    expect(data.summary).toMatch(/1 failed/);
    expect(data.summary.length).toBeLessThanOrEqual(1500);
    expect(data.tests[0]).toMatchObject({ id: 'tests/test_greet.py::test_greets', status: 'failed' });
  });

  it('never reads zero collected tests as a pass', async () => {
    const repo = project({ 'pytest.ini': '[pytest]\n', 'tests/test_nothing.py': '# no tests yet\n' });
    const data = dataOf(await run(repo));
    expect(data).toMatchObject({ status: 'no_tests', failure_class: 'no_tests', exit_code: 5 });
  });

  it('classifies a refused database connection as infrastructure with specific advice', async () => {
    const repo = project({
      'tests/test_db.py': 'import socket\n\ndef test_db():\n    socket.create_connection(("127.0.0.1", 9), timeout=2)\n',
    });
    const data = dataOf(await run(repo));
    expect(data.failure_class).toBe('infrastructure');
    expect(data.summary).toMatch(/ConnectionRefusedError/);
    expect(data.advice).toMatch(/mock|SQLite|integration/i);
  });

  it('calls a missing first-party module a code failure, not infrastructure', async () => {
    const repo = project({ 'app/__init__.py': '', 'tests/test_user.py': 'from app.services.user import create\n\ndef test_create():\n    assert create()\n' });
    const data = dataOf(await run(repo));
    expect(data.failure_class).toBe('code');
    expect(data.summary).toMatch(/app\.services/);
  });

  it("uses the project's virtualenv interpreter (a module that exists only in .venv)", async () => {
    const repo = project({ 'tests/test_venv.py': 'import venvonly\n\ndef test_venv():\n    assert venvonly.VALUE == 42\n' });
    execFileSync('python3', ['-m', 'venv', '--system-site-packages', '.venv'], { cwd: repo.dir });
    const site = execFileSync(path.join(repo.dir, '.venv/bin/python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'], { encoding: 'utf8' }).trim();
    execFileSync('sh', ['-c', `echo 'VALUE = 42' > ${site}/venvonly.py`]);
    const data = dataOf(await run(repo));
    expect(data.status).toBe('passed');
    expect(data.command[0]).toBe(path.join(repo.dir, '.venv/bin/python'));
    expect(data.env.interpreter).toBe(path.join(repo.dir, '.venv/bin/python'));
    expect(data.env.notes.join(' ')).toMatch(/virtualenv \.venv/);
  });

  it('kills a hanging run and its grandchildren (also one that left the process group) on timeout', async () => {
    const repo = project({
      'tests/test_hang.py': [
        'import subprocess, time, pathlib',
        'def test_hang():',
        '    a = subprocess.Popen(["sleep", "300"])',
        '    b = subprocess.Popen(["sleep", "301"], start_new_session=True)',
        '    pathlib.Path("/tmp/coachgate-hang-pids-' + process.pid + '").write_text(f"{a.pid} {b.pid}")',
        '    time.sleep(300)',
      ].join('\n'),
    });
    const data = dataOf(await run(repo, { timeout_s: 3 }));
    expect(data).toMatchObject({ status: 'timeout', timed_out: true, failure_class: 'timeout' });
    const pids = readFileSync(`/tmp/coachgate-hang-pids-${process.pid}`, 'utf8').split(' ').map(Number);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(pids.filter(alive)).toEqual([]);
  });

  it('reports a run that writes into the tree as tree_clean: false', async () => {
    const repo = project({ 'tests/test_write.py': 'import pathlib\n\ndef test_write():\n    pathlib.Path("generated.txt").write_text("x")\n    assert True\n' });
    const result = await run(repo);
    expect(dataOf(result).tree_clean).toBe(false);
    expect(textOf(result)).toMatch(/changed files in the worktree/);
  });

  it('keeps memory bounded while a suite prints 150 MB, with the full output in the log', async () => {
    const repo = project({
      'pytest.ini': '[pytest]\naddopts = -s\n',
      'tests/test_loud.py': 'import sys\n\ndef test_loud():\n    line = "x" * 99 + "\\n"\n    for _ in range(1_500_000):\n        sys.stdout.write(line)\n    assert False, "the real error"\n',
    });
    let peak = 0;
    const baseline = process.memoryUsage().rss;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss - baseline)), 50);
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    clearInterval(sampler);
    expect(data.output_bytes).toBeGreaterThan(150_000_000);
    expect(statSync(data.log_path).size).toBe(data.output_bytes);
    expect(data.summary).toMatch(/the real error/);
    expect(peak).toBeLessThan(64 * 1024 * 1024);
  }, 120_000);

  it('splits failures into new and pre-existing against the base commit', async () => {
    const repo = project({
      'tests/test_math.py': 'def test_old_bug():\n    assert 1 == 2\n\ndef test_add():\n    assert 1 + 1 == 2\n',
    });
    repo.git('checkout', '-q', '-b', 'feature');
    repo.write('tests/test_math.py', 'def test_old_bug():\n    assert 1 == 2\n\ndef test_add():\n    assert 1 + 1 == 3\n');
    const first = dataOf(await run(repo, { compare_baseline: true }));
    expect(first.baseline).toMatchObject({ status: 'failed', cached: false, new_failures: ['tests/test_math.py::test_add'], preexisting_failures: ['tests/test_math.py::test_old_bug'] });
    const second = dataOf(await run(repo, { compare_baseline: true }));
    expect(second.baseline.cached).toBe(true);
    expect(repo.git('worktree', 'list').split('\n')).toHaveLength(1);
  });
});

describe('run_independent_tests with node', () => {
  it("runs node's test runner directly with a JUnit report, passing and failing", async () => {
    const repo = project({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
      'test/greet.test.js': "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('greets', () => assert.equal('Hello', 'Hello'));\n",
    });
    const green = dataOf(await run(repo));
    expect(green).toMatchObject({ status: 'passed', detected_by: 'package.json scripts.test (node --test) → node --test' });
    expect(green.tests.map((t: { id: string }) => t.id).join()).toMatch(/greets/);
    repo.write('test/greet.test.js', "import test from 'node:test';\nimport assert from 'node:assert/strict';\ntest('greets', () => assert.equal('Hi', 'Hello'));\n");
    const red = dataOf(await run(repo));
    expect(red).toMatchObject({ status: 'failed', failure_class: 'code' });
    expect(red.summary).toMatch(/Expected values to be strictly equal|'Hi'/);
  });

  it('runs vitest from node_modules/.bin', async () => {
    const repo = project({
      'package.json': JSON.stringify({ type: 'module', scripts: { test: 'vitest run' } }),
      'sum.test.js': "import { test, expect } from 'vitest';\ntest('adds', () => expect(1 + 1).toBe(2));\ntest('breaks', () => expect(1 + 1).toBe(3));\n",
      'vitest.config.js': 'export default {};\n',
    });
    execFileSync('ln', ['-s', path.resolve('node_modules'), path.join(repo.dir, 'node_modules')]);
    const data = dataOf(await run(repo, { timeout_s: 120 }));
    expect(data.command[0]).toBe('vitest');
    expect(data).toMatchObject({ status: 'failed', failure_class: 'code' });
    expect(data.counts).toMatchObject({ passed: 1, failed: 1 });
    expect(data.env.path_prefix).toEqual([path.join(repo.dir, 'node_modules/.bin')]);
  }, 120_000);
});

describe('run_independent_tests contract', () => {
  it('refuses a command override unless the base config allows it', async () => {
    const repo = project({ 'tests/test_x.py': 'def test_x():\n    assert True\n' });
    const refused = await run(repo, { command: ['true'] });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/allow_command_override/);
    repo.write('.guardkit/config.yaml', 'coachgate:\n  allow_command_override: true\n');
    repo.commit('allow overrides');
    const allowed = dataOf(await run(repo, { command: ['sh', '-c', 'echo "1 passed in 0.01s"'] }));
    expect(allowed.detected_by).toMatch(/command input/);
  });

  it('runs toolchain.test from the base commit through sh -c, and reports a missing runner as environment', async () => {
    const repo = project({ '.guardkit/config.yaml': 'toolchain:\n  test: definitely-not-a-test-runner --all\n' });
    const data = dataOf(await run(repo));
    expect(data.command).toEqual(['sh', '-c', 'definitely-not-a-test-runner --all']);
    expect(data.exit_code).toBe(127);
    expect(data.failure_class).toBe('environment');
  });

  it('runs under a login shell when the base config asks for it', async () => {
    const repo = project({ '.guardkit/config.yaml': 'autobuild:\n  coach:\n    test_execution: login-shell\n', 'tests/test_x.py': 'def test_x():\n    assert True\n' });
    const data = dataOf(await run(repo));
    expect(data.command.slice(0, 2)).toEqual([loginShellProgram(), '-lc']);
    expect(data.command[2]).toMatch(/^python3 -m pytest /);
    expect(data).toMatchObject({ status: 'passed', env: { shell: `${path.basename(loginShellProgram())} -lc` } });
  });

  it('sends progress notifications while a run lasts and stops the run when the client cancels', async () => {
    const repo = project({ 'tests/test_slow.py': 'import time, pathlib, os\n\ndef test_slow():\n    pathlib.Path("/tmp/coachgate-cancel-' + process.pid + '").write_text(str(os.getpid()))\n    time.sleep(60)\n' });
    const { client, close } = await connect({ roots: [repo.dir] });
    const progress: string[] = [];
    const controller = new AbortController();
    const call = client.callTool({ name: 'run_independent_tests', arguments: { worktree: repo.dir, task_id: 'TASK-1' } }, undefined, {
      signal: controller.signal,
      timeout: 120_000,
      onprogress: (update) => progress.push(update.message ?? ''),
    });
    // Progress comes every 2.5 s; 8 s leaves room for a loaded machine to still deliver two.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    controller.abort();
    await expect(call).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    await close();
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress[0]).toMatch(/tests running for \d+ s/);
    const pid = Number(readFileSync(`/tmp/coachgate-cancel-${process.pid}`, 'utf8'));
    expect(alive(pid)).toBe(false);
  }, 30_000);

  it('serialises runs on one worktree', async () => {
    const repo = project({ 'tests/test_x.py': 'import time\n\ndef test_x():\n    time.sleep(1)\n' });
    const { client, close } = await connect({ roots: [repo.dir] });
    const [a, b] = await Promise.all([0, 1].map(() => callTool(client, 'run_independent_tests', { worktree: repo.dir, task_id: 'TASK-1' })));
    await close();
    const runs = [dataOf(a!), dataOf(b!)].sort((x, y) => (x.run_id < y.run_id ? -1 : 1));
    expect(Date.parse(runs[1].started_at)).toBeGreaterThanOrEqual(Date.parse(runs[0].started_at) + runs[0].duration_ms);
    expect(existsSync(path.join(repo.dir, '.guardkit/autobuild/TASK-1/runs'))).toBe(true);
  });
});
