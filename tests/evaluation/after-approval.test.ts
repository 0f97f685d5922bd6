import { execFileSync } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runGate } from '../helpers/gate-cli.js';
import { dataOf } from '../helpers/mcp.js';
import { GOOD_CALC, TASK, hasPytest, pythonTask, type PythonTask } from '../helpers/python-task.js';

/**
 * What a Player can change after an approval without touching a tracked file: files git ignores that the
 * runner still loads, `.git/info/exclude` itself, virtualenv site hooks, and code behind a link into the
 * store. Each must make `coachgate gate` fail (or the approval be refused). Real pytest, real venv.
 */
let project: PythonTask | undefined;
afterEach(async () => {
  await project?.close();
  project?.repo.remove();
  project = undefined;
});

const DROP_FAILURES =
  'def pytest_collection_modifyitems(config, items):\n    items[:] = [i for i in items if i.name != "test_add"]\n';

async function approved(base: Record<string, string> = {}) {
  project = await pythonTask({ 'calc.py': GOOD_CALC }, base);
  const { result, text } = await project.approve();
  expect(result.isError, text).toBeFalsy();
  const gate = runGate(project.repo.dir, TASK);
  expect(gate.status, gate.stdout + gate.stderr).toBe(0);
  return project.repo;
}

function expectGateFails(dir: string, pattern: RegExp) {
  const gate = runGate(dir, TASK);
  expect(gate.status, gate.stdout).toBe(1);
  expect(gate.stdout).toMatch(pattern);
}

const TREE_CHANGED = /the worktree changed after run .*: the approval no longer describes the code/;

describe.skipIf(!hasPytest)('after an approval (pytest installed)', () => {
  it('an ignored conftest.py written after the approval fails the gate; removing it restores it', async () => {
    const repo = await approved({ '.gitignore': 'tests/conftest.py\n' });
    repo.write('tests/conftest.py', DROP_FAILURES);
    expect(repo.git('status', '--porcelain')).not.toMatch(/conftest/); // git does not see it
    expectGateFails(repo.dir, TREE_CHANGED);
    rmSync(path.join(repo.dir, 'tests/conftest.py'));
    expect(runGate(repo.dir, TASK).status).toBe(0);
  });

  it('editing .git/info/exclude after the approval fails the gate', async () => {
    const repo = await approved();
    const exclude = path.join(repo.dir, '.git/info/exclude');
    const before = readFileSync(exclude, 'utf8');
    appendFileSync(exclude, 'tests/conftest.py\n');
    expectGateFails(repo.dir, TREE_CHANGED);
    writeFileSync(exclude, before);
    expect(runGate(repo.dir, TASK).status).toBe(0);
  });

  it("a .pth file added to the project's own virtualenv after the approval fails the gate", async () => {
    project = await pythonTask({ 'calc.py': GOOD_CALC, '.gitignore': '.venv/\n' });
    const { repo } = project;
    // A real virtualenv the runner uses (.venv/bin/python -m pytest), borrowing the system's pytest.
    execFileSync('python3', ['-m', 'venv', '--without-pip', '--system-site-packages', '.venv'], {
      cwd: repo.dir,
    });
    const { result, text } = await project.approve();
    expect(result.isError, text).toBeFalsy();
    expect(runGate(repo.dir, TASK).status).toBe(0);
    const sitePackages = execFileSync(
      path.join(repo.dir, '.venv/bin/python'),
      ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
      { encoding: 'utf8' },
    ).trim();
    writeFileSync(path.join(sitePackages, 'zz_patch.pth'), 'import os\n');
    expectGateFails(repo.dir, TREE_CHANGED);
  });

  it('code linked into the store is refused at approval, naming the link', async () => {
    project = await pythonTask({});
    const { repo } = project;
    // The Player keeps the real code in the store, which the server writes and never fingerprints.
    const hidden = path.join(repo.dir, '.guardkit/autobuild', TASK, 'calc_impl.py');
    writeFileSync(hidden, GOOD_CALC);
    rmSync(path.join(repo.dir, 'calc.py'));
    symlinkSync(hidden, path.join(repo.dir, 'calc.py'));
    const { run, result, text } = await project.approve();
    expect(run.status).toBe('passed');
    expect(result.isError).toBe(true);
    expect(text).toMatch(/calc\.py is a symbolic link into \.guardkit\/autobuild\//);
  });

  it('a source file replaced by a link into the store after the approval fails the gate, naming it', async () => {
    const repo = await approved();
    const hidden = path.join(repo.dir, '.guardkit/autobuild', TASK, 'calc_impl.py');
    writeFileSync(hidden, GOOD_CALC);
    rmSync(path.join(repo.dir, 'calc.py'));
    symlinkSync(hidden, path.join(repo.dir, 'calc.py'));
    expectGateFails(repo.dir, /calc\.py is a symbolic link into \.guardkit\/autobuild\//);
    const data = JSON.parse(runGate(repo.dir, TASK, 'json').stdout);
    expect(data.passed).toBe(false);
    expect(dataOf(await project!.call('task_status', {})).latest_run.fresh).toBe(false);
  });
});
