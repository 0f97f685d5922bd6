import { beforeAll, describe, expect, it } from 'vitest';
import { countsFromSummaryLines } from '../../src/runner/report/summary-lines.js';
import { RESULT_SEPARATOR } from '../../src/runner/summary.js';
import {
  interpret,
  junitReport,
  runPytest,
  type Interpretation,
  type RealRun,
} from './report-real-runs.js';

const ASSERTION_FAILURE = {
  'tests/test_calc.py': [
    'import pytest',
    '',
    'class TestMath:',
    '    def test_add(self):',
    '        assert 1 + 1 == 2',
    '    def test_double(self):',
    '        x = 2',
    '        assert x * 2 == 5',
    '',
    'def test_plain():',
    '    pass',
    '',
    '@pytest.mark.skip(reason="later")',
    'def test_later():',
    '    pass',
    '',
  ].join('\n'),
};

const CONNECTION_REFUSED = {
  'tests/test_db.py': [
    'import socket',
    '',
    'def closed_port():',
    '    probe = socket.socket()',
    '    probe.bind(("127.0.0.1", 0))',
    '    port = probe.getsockname()[1]',
    '    probe.close()',
    '    return port',
    '',
    'def connect():',
    '    return socket.create_connection(("127.0.0.1", closed_port()), timeout=2)',
    '',
    'def test_reads_user_from_db():',
    '    conn = connect()',
    '    assert conn',
    '',
  ].join('\n'),
};

interface Scenario {
  files: Record<string, string>;
  args?: string[];
  run?: RealRun;
  result?: Interpretation;
}

const scenarios = {
  passing: {
    files: {
      'tests/test_ok.py':
        'class TestOk:\n    def test_one(self):\n        assert True\n\ndef test_two():\n    assert 2 > 1\n',
    },
  },
  // --color=yes: real runs may be coloured; nothing downstream may depend on colour codes.
  assertion: { files: ASSERTION_FAILURE, args: ['--color=yes'] },
  collection: {
    files: {
      'tests/test_config.py':
        'import os\nSETTINGS = os.environ["APP_SETTINGS_THAT_DO_NOT_EXIST"]\n\ndef test_settings():\n    assert SETTINGS\n',
      'tests/test_ok.py': 'def test_ok():\n    assert True\n',
    },
  },
  syntax: { files: { 'tests/test_syn.py': 'def test_a():\n    x = (1,\n    assert x\n' } },
  zeroTests: { files: { 'tests/helpers.py': 'def helper():\n    return 1\n' } },
  connectionRefused: { files: CONNECTION_REFUSED },
  missingFirstParty: {
    files: {
      'app/__init__.py': '',
      'tests/test_user.py':
        'from app.services.user import create_user\n\ndef test_create_user():\n    assert create_user("ada")\n',
    },
  },
  missingDriver: {
    files: {
      'tests/test_pg.py':
        'import psycopg2\n\ndef test_query():\n    assert psycopg2.connect("dbname=test")\n',
    },
  },
} satisfies Record<string, Scenario>;

type Name = keyof typeof scenarios;
const results = {} as Record<Name, { run: RealRun; result: Interpretation }>;

beforeAll(() => {
  for (const [name, scenario] of Object.entries(scenarios) as [Name, Scenario][]) {
    const run = runPytest(scenario.files, scenario.args);
    results[name] = { run, result: interpret(run, junitReport, ['app']) };
  }
});

describe('real pytest runs, interpreted', () => {
  it('passing: node ids from the dotted classname, passed status, no failure class', () => {
    const { run, result } = results.passing;
    expect(run.exit_code).toBe(0);
    expect(result.tests).toEqual([
      { id: 'tests/test_ok.py::TestOk::test_one', status: 'passed' },
      { id: 'tests/test_ok.py::test_two', status: 'passed' },
    ]);
    expect(result.counts).toEqual({ total: 2, passed: 2, failed: 0, errors: 0, skipped: 0 });
    expect(result.status).toBe('passed');
    expect(result.classification.failure_class).toBe('none');
    expect(result.summary).toMatch(/^=+ 2 passed in [\d.]+s =+$/);
  });

  it('assertion failure: per-test results with the E line as message, counts agree with the result line', () => {
    const { run, result } = results.assertion;
    expect(run.exit_code).toBe(1);
    expect(result.tests).toEqual([
      { id: 'tests/test_calc.py::TestMath::test_add', status: 'passed' },
      {
        id: 'tests/test_calc.py::TestMath::test_double',
        status: 'failed',
        message: 'assert (2 * 2) == 5',
      },
      { id: 'tests/test_calc.py::test_plain', status: 'passed' },
      { id: 'tests/test_calc.py::test_later', status: 'skipped', message: 'later' },
    ]);
    expect(result.counts).toEqual({ total: 4, passed: 2, failed: 1, errors: 0, skipped: 1 });
    expect(countsFromSummaryLines(run.output)).toEqual(result.counts);
    expect(result.status).toBe('failed');
    expect(result.classification.failure_class).toBe('code');
    expect(result.classification.reason).toContain('assert (2 * 2) == 5');
    expect(result.classification.advice).toContain('tests/test_calc.py:8');
  });

  it('assertion failure: the summary is the error block with context, then the final result lines, uncoloured', () => {
    const { run, result } = results.assertion;
    expect(run.output).toContain('\u001b['); // the run really was coloured
    const { summary } = result;
    expect(summary.length).toBeLessThanOrEqual(1500);
    expect(summary).not.toContain('\u001b');
    const [errorPart = '', resultPart = ''] = summary.split(RESULT_SEPARATOR);
    expect(errorPart).toMatch(/^_+ TestMath\.test_double _+$/m);
    expect(errorPart).toContain('>       assert x * 2 == 5');
    expect(errorPart).toContain('E       assert (2 * 2) == 5');
    expect(errorPart).toContain('tests/test_calc.py:8: AssertionError');
    expect(resultPart).toContain(
      'FAILED tests/test_calc.py::TestMath::test_double - assert (2 * 2) == 5',
    );
    expect(resultPart).toMatch(/^=+ 1 failed, 2 passed, 1 skipped in [\d.]+s =+$/m);
  });

  it('collection error from a module-level exception: error status, collection class naming the file', () => {
    const { run, result } = results.collection;
    expect(run.exit_code).toBe(2);
    expect(result.tests).toEqual([
      {
        id: 'tests/test_config.py',
        status: 'error',
        message: expect.stringContaining("KeyError: 'APP_SETTINGS_THAT_DO_NOT_EXIST'"),
      },
    ]);
    expect(countsFromSummaryLines(run.output)).toEqual({
      total: 1,
      passed: 0,
      failed: 0,
      errors: 1,
      skipped: 0,
    });
    expect(result.status).toBe('error');
    expect(result.classification.failure_class).toBe('collection');
    expect(result.classification.reason).toContain('KeyError');
    expect(result.classification.advice).toContain('tests/test_config.py');
    expect(result.summary).toMatch(/^_+ ERROR collecting tests\/test_config\.py _+$/m);
    expect(result.summary).toContain("E   KeyError: 'APP_SETTINGS_THAT_DO_NOT_EXIST'");
    expect(result.summary).toMatch(/Interrupted: 1 error during collection/);
  });

  it('syntax error during collection: a code failure, and the reason says why it is not a collection problem', () => {
    const { result } = results.syntax;
    expect(result.tests).toEqual([
      { id: 'tests/test_syn.py', status: 'error', message: expect.stringContaining('SyntaxError') },
    ]);
    expect(result.status).toBe('error');
    expect(result.classification.failure_class).toBe('code');
    expect(result.classification.reason).toMatch(/test_syn\.py:2/);
    expect(result.classification.reason).toMatch(/collecting tests.*error in the code/);
    expect(result.summary).toContain("E   SyntaxError: '(' was never closed");
    expect(result.summary).toMatch(/E\s+\^/); // the caret line under the offending code
    expect(result.summary.length).toBeLessThanOrEqual(1500);
  });

  it('zero tests: exit 5 reads as no_tests, never as a pass', () => {
    const { run, result } = results.zeroTests;
    expect(run.exit_code).toBe(5);
    expect(result.tests).toEqual([]);
    expect(result.counts.total).toBe(0);
    expect(result.status).toBe('no_tests');
    expect(result.classification.failure_class).toBe('no_tests');
    expect(result.classification.reason).toContain('no tests ran');
    expect(result.summary).toMatch(/no tests ran in/);
  });

  it('ConnectionRefusedError: infrastructure, with the error kept in a summary condensed from a long traceback', () => {
    const { run, result } = results.connectionRefused;
    expect(result.status).toBe('failed');
    expect(result.tests).toEqual([
      {
        id: 'tests/test_db.py::test_reads_user_from_db',
        status: 'failed',
        message: expect.stringContaining('ConnectionRefusedError: [Errno 111] Connection refused'),
      },
    ]);
    expect(result.classification.failure_class).toBe('infrastructure');
    expect(result.classification.reason).toContain('ConnectionRefusedError');
    expect(result.classification.advice).toMatch(/[Mm]ock the service/);
    expect(result.classification.advice).toContain('SQLite in-memory');
    expect(result.classification.advice).toContain('integration');
    // The block alone is longer than the limit: condensing must keep the lines that matter.
    const block = run.output.slice(
      run.output.indexOf('___ test_reads_user_from_db'),
      run.output.indexOf('generated xml'),
    );
    expect(block.length).toBeGreaterThan(1500);
    expect(result.summary.length).toBeLessThanOrEqual(1500);
    expect(result.summary).toContain('>       conn = connect()');
    expect(result.summary).toMatch(/^tests\/test_db\.py:14: $/m);
    expect(result.summary).toMatch(
      /^E\s+ConnectionRefusedError: \[Errno 111\] Connection refused$/m,
    );
    expect(result.summary).toMatch(/=+ 1 failed in [\d.]+s =+/);
  });

  it('missing first-party module app.services: a code failure pointing at the file to create', () => {
    const { result } = results.missingFirstParty;
    expect(result.status).toBe('error');
    expect(result.classification.failure_class).toBe('code');
    expect(result.classification.reason).toContain("No module named 'app.services'");
    expect(result.classification.advice).toContain('app/services.py or app/services/__init__.py');
    expect(result.summary).toContain("E   ModuleNotFoundError: No module named 'app.services'");
  });

  it('the same missing module is a missing dependency when app is not first-party', () => {
    const { run } = results.missingFirstParty;
    const notFirstParty = interpret(run, junitReport, []);
    expect(notFirstParty.classification.failure_class).toBe('environment');
    expect(notFirstParty.classification.advice).toContain('pip install app');
  });

  it('missing psycopg2: infrastructure (the test needs a database), not a code failure', () => {
    const { result } = results.missingDriver;
    expect(result.status).toBe('error');
    expect(result.tests).toEqual([
      {
        id: 'tests/test_pg.py',
        status: 'error',
        message: "ModuleNotFoundError: No module named 'psycopg2'",
      },
    ]);
    expect(result.classification.failure_class).toBe('infrastructure');
    expect(result.classification.reason).toContain('psycopg2');
    expect(result.classification.advice).toMatch(/[Mm]ock/);
  });
});
