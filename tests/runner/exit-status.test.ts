import { describe, expect, it } from 'vitest';
import type { TestCommand } from '../../src/runner/detect.js';
import { exitStatusNodeScript, exitStatusTest } from '../../src/runner/exit-status.js';

const ended = (exit_code: number | null, signal: string | null = null) => ({
  exit_code,
  signal,
  timed_out: false,
  cancelled: false,
});
const custom = (shellCommand: string, extra: Partial<TestCommand> = {}): TestCommand => ({
  shellCommand,
  detected_by: 'toolchain.test',
  runner: 'custom',
  report: 'text',
  ...extra,
});

describe('exitStatusTest: a command with no per-test output is one test named by itself', () => {
  it('passes on exit 0 and fails on any other status, named as written', () => {
    expect(exitStatusTest(custom(' make test '), ended(0), 'ok')).toEqual({
      id: 'make test',
      status: 'passed',
    });
    expect(exitStatusTest(custom('sh test.sh'), ended(2), '')).toEqual({
      id: 'sh test.sh',
      status: 'failed',
      message: 'exited with status 2',
    });
    const npm: TestCommand = { ...custom(''), runner: 'npm', script: 'node check.js' };
    expect(exitStatusTest(npm, ended(1), '')?.id).toBe('node check.js');
  });

  it('is an error when the command did not start, and nothing when the run did not end by itself', () => {
    expect(exitStatusTest(custom('nosuch'), ended(127), '')?.status).toBe('error');
    expect(exitStatusTest(custom('sh t.sh'), ended(null, 'SIGKILL'), '')).toBeUndefined();
    expect(exitStatusTest(custom('sh t.sh'), { ...ended(0), timed_out: true }, '')).toBeUndefined();
  });

  it('leaves runners to their own words: a known runner, or output saying nothing ran', () => {
    expect(exitStatusTest(custom('npx vitest run', { scriptRunner: 'vitest' }), ended(0), '')).toBe(
      undefined,
    );
    expect(exitStatusTest(custom('pytest'), ended(5), 'no tests ran in 0.01s')).toBeUndefined();
    expect(exitStatusTest(custom('npm run lint && node --test'), ended(1), '')).toBeUndefined();
    const pytest: TestCommand = { ...custom(''), runner: 'pytest', argv: ['pytest'] };
    expect(exitStatusTest(pytest, ended(0), '')).toBeUndefined();
  });
});

describe('exitStatusNodeScript: the script a plain node command runs', () => {
  it('names the file of `node <file>`, past its options, and nothing for any other command', () => {
    const npm = (script: string): TestCommand => ({ ...custom(''), runner: 'npm', script });
    expect(exitStatusNodeScript(npm('node test/check.js'))).toBe('test/check.js');
    expect(exitStatusNodeScript(custom('node --no-warnings check.js'))).toBe('check.js');
    expect(exitStatusNodeScript(custom('node --test'))).toBeUndefined();
    expect(exitStatusNodeScript(custom('python3 check.py'))).toBeUndefined();
    expect(exitStatusNodeScript(custom('node a.js && node b.js'))).toBeUndefined();
  });
});
