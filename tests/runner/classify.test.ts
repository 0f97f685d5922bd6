import { beforeAll, describe, expect, it } from 'vitest';
import { classifyFailure, type FailureClassification } from '../../src/runner/classify.js';
import type { RunStatus } from '../../src/runner/report/types.js';
import { runInProject, runPytest, type RealRun } from './report-real-runs.js';

// Real pytest runs with assertion, collection, syntax, connection-refused, app.services and psycopg2
// failures are classified in report-pytest.test.ts; node and vitest ones in their report-* files.

const classify = (
  run: RealRun,
  status: RunStatus = 'error',
  firstPartyModules: string[] = [],
): FailureClassification =>
  classifyFailure({
    status,
    output: run.output,
    exit_code: run.exit_code,
    firstPartyModules,
    signal: run.signal,
  });

const literal = (
  output: string,
  status: RunStatus = 'failed',
  exit_code: number | null = 1,
): FailureClassification =>
  classifyFailure({ status, output, exit_code, firstPartyModules: ['app'] });

const runs = {} as Record<
  | 'commandNotFound'
  | 'notExecutable'
  | 'noPytest'
  | 'noVitest'
  | 'usageError'
  | 'sqliteUnopenable'
  | 'sqliteNoTable'
  | 'dns'
  | 'appNotImportable'
  | 'thirdParty'
  | 'killed',
  RealRun
>;

beforeAll(() => {
  runs.commandNotFound = runInProject({}, () => ['sh', '-c', 'coachgate-no-such-runner --verbose']);
  runs.notExecutable = runInProject({ 'run-tests.sh': '#!/bin/sh\necho hi\n' }, () => [
    'sh',
    '-c',
    './run-tests.sh',
  ]);
  // -S leaves out site-packages, where pytest is installed.
  runs.noPytest = runInProject({ 'tests/test_a.py': 'def test_a():\n    pass\n' }, () => [
    'python3',
    '-S',
    '-m',
    'pytest',
  ]);
  runs.noVitest = runInProject({ 'run.mjs': "await import('vitest');\n" }, () => [
    process.execPath,
    'run.mjs',
  ]);
  runs.usageError = runPytest({ 'tests/test_a.py': 'def test_a():\n    pass\n' }, [
    'tests/test_missing.py',
  ]);
  runs.sqliteUnopenable = runPytest({
    'tests/test_repo.py':
      'import sqlite3\n\ndef test_saves():\n    sqlite3.connect("/nonexistent-coachgate-dir/app.db").execute("select 1")\n',
  });
  runs.sqliteNoTable = runPytest({
    'tests/test_repo.py':
      'import sqlite3\n\ndef test_saves():\n    sqlite3.connect(":memory:").execute("select * from users")\n',
  });
  runs.dns = runPytest({
    'tests/test_api.py':
      'import socket\n\ndef test_fetch():\n    socket.getaddrinfo("api.coachgate.invalid", 443)\n',
  });
  // -P keeps the working directory off sys.path, as the `pytest` script does: `app` exists but is not importable.
  runs.appNotImportable = runInProject(
    {
      'app/__init__.py': 'VERSION = 1\n',
      'tests/test_version.py': 'import app\n\ndef test_version():\n    assert app.VERSION == 1\n',
    },
    () => ['python3', '-P', '-m', 'pytest', '-p', 'no:cacheprovider'],
  );
  runs.thirdParty = runPytest({
    'tests/test_http.py': 'import requests_coachgate_missing\n\ndef test_get():\n    pass\n',
  });
  runs.killed = runInProject({}, () => [
    'python3',
    '-c',
    'import os, signal; print("working"); os.kill(os.getpid(), signal.SIGKILL)',
  ]);
});

describe('classifyFailure: environment (real runs)', () => {
  it('a runner that does not exist (exit 127) names the command', () => {
    expect(runs.commandNotFound.exit_code).toBe(127);
    const result = classify(runs.commandNotFound);
    expect(result.failure_class).toBe('environment');
    expect(result.reason).toContain('coachgate-no-such-runner');
    expect(result.advice).toContain('Install coachgate-no-such-runner');
  });

  it("recognises bash's, zsh's and execa's way of saying so, but not a test's own \"not found\" message", () => {
    expect(literal('bash: line 1: pytest: command not found', 'error', 127).reason).toContain(
      'pytest was not found',
    );
    expect(literal('zsh: command not found: vitest', 'error', 127).reason).toContain(
      'vitest was not found',
    );
    expect(
      literal('Command failed with ENOENT: pytest -q\nspawn pytest ENOENT', 'error', null).reason,
    ).toContain('pytest was not found');
    expect(
      literal('E   LookupError: user 42: not found\ntests/test_users.py:9: LookupError')
        .failure_class,
    ).toBe('code');
  });

  it('a test script without the execute bit (exit 126)', () => {
    expect(runs.notExecutable.exit_code).toBe(126);
    expect(classify(runs.notExecutable)).toMatchObject({
      failure_class: 'environment',
      advice: expect.stringContaining('chmod +x'),
    });
  });

  it('python -m pytest without pytest installed', () => {
    expect(runs.noPytest.output).toContain('No module named pytest');
    const result = classify(runs.noPytest);
    expect(result.failure_class).toBe('environment');
    expect(result.advice).toContain('python -m pip install pytest');
  });

  it("Node without vitest in node_modules (Cannot find package 'vitest')", () => {
    expect(runs.noVitest.output).toContain("Cannot find package 'vitest'");
    const result = classify(runs.noVitest);
    expect(result.failure_class).toBe('environment');
    expect(result.advice).toContain('npm install --save-dev vitest');
  });

  it('a test command the runner rejects (pytest exit 4)', () => {
    expect(runs.usageError.exit_code).toBe(4);
    const result = classify(runs.usageError);
    expect(result.failure_class).toBe('environment');
    expect(result.reason).toContain('file or directory not found: tests/test_missing.py');
  });

  it('a missing third-party dependency', () => {
    const result = classify(runs.thirdParty, 'error', ['app']);
    expect(result.failure_class).toBe('environment');
    expect(result.advice).toContain('pip install requests_coachgate_missing');
  });

  it('a process killed by a signal, outside a timeout', () => {
    expect(runs.killed.signal).toBe('SIGKILL');
    const result = classify(runs.killed);
    expect(result.failure_class).toBe('environment');
    expect(result.reason).toContain('SIGKILL');
  });
});

describe('classifyFailure: infrastructure versus code (real runs)', () => {
  it('sqlite3 "unable to open database file" is infrastructure', () => {
    const result = classify(runs.sqliteUnopenable, 'failed');
    expect(result.failure_class).toBe('infrastructure');
    expect(result.reason).toContain('sqlite3.OperationalError: unable to open database file');
    expect(result.advice).toContain('SQLite in-memory');
  });

  it('sqlite3 "no such table" is the code (a missing migration), not infrastructure', () => {
    const result = classify(runs.sqliteNoTable, 'failed');
    expect(result.failure_class).toBe('code');
    expect(result.reason).toContain('no such table: users');
    expect(result.advice).toContain('tests/test_repo.py:4');
  });

  it('a failed host lookup is infrastructure (network)', () => {
    const result = classify(runs.dns, 'failed');
    expect(result.failure_class).toBe('infrastructure');
    expect(result.reason).toMatch(/Name or service not known|Temporary failure in name resolution/);
    expect(result.advice).toMatch(/[Mm]ock the HTTP or client call/);
  });

  it('a first-party package that exists but is not importable is a collection problem with the import path as fix', () => {
    expect(runs.appNotImportable.output).toContain("No module named 'app'");
    const result = classify(runs.appNotImportable, 'error', ['app']);
    expect(result.failure_class).toBe('collection');
    expect(result.advice).toContain('pythonpath');
  });
});

describe('classifyFailure: rule order and outcome-level classes', () => {
  it('passed, timeout and no_tests come from the status alone', () => {
    expect(literal('ECONNREFUSED', 'passed', 0).failure_class).toBe('none');
    expect(literal('ECONNREFUSED', 'timeout', null)).toMatchObject({
      failure_class: 'timeout',
      advice: expect.stringContaining('hanging test'),
    });
    expect(literal('no tests ran in 0.01s', 'no_tests', 5)).toMatchObject({
      failure_class: 'no_tests',
      advice: expect.stringContaining('discovery'),
    });
  });

  it('environment outranks infrastructure, which outranks a code failure in the same output', () => {
    const infraAndCode =
      'E   assert 1 == 2\nE   redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused.';
    expect(literal(infraAndCode).failure_class).toBe('infrastructure');
    expect(
      literal(`bash: pytest: command not found\n${infraAndCode}`, 'error', 127).failure_class,
    ).toBe('environment');
  });

  it('a missing service client outranks a missing first-party module; a syntax error outranks collection', () => {
    const output =
      "E   ModuleNotFoundError: No module named 'app.models'\nE   ModuleNotFoundError: No module named 'redis'";
    expect(literal(output, 'error', 2).failure_class).toBe('infrastructure');
    const syntaxInCollection =
      '___ ERROR collecting tests/test_a.py ___\nE     File "app/core.py", line 3\nE   IndentationError: unexpected indent\nInterrupted: 1 error during collection';
    expect(literal(syntaxInCollection, 'error', 2)).toMatchObject({
      failure_class: 'code',
      reason: expect.stringContaining('app/core.py:3'),
    });
  });

  it('an error run with nothing recognisable is not blamed on the code', () => {
    const result = literal('Segmentation fault (core dumped)\n', 'error', 139);
    expect(result.failure_class).toBe('environment');
    expect(result.reason).toContain('139');
  });
});
