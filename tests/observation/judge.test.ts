import { describe, expect, it } from 'vitest';
import { judgeReplay, parseRecordedCalls, type RecordedLine } from '../../src/observation/judge.js';

/** A recorded call of app/calc.py's `name` with one argument, as the recorder writes it. */
const call = (name: string, arg: number, result: string, test = 'tests/t.py::test_a') =>
  ({
    event: 'call',
    test,
    module: 'app.calc',
    function: name,
    file: 'app/calc.py',
    args: `(${arg},)`,
    kwargs: '{}',
    result,
  }) satisfies RecordedLine;

describe('judging a replay outside the harness', () => {
  it('names a call whose answer in order differs, with the test, arguments and both answers', () => {
    const observed = judgeReplay([call('scale', 3, '7')], {
      import_failed: [],
      alone: { 0: { first: '6', second: '6', agrees: false, repeats: true } },
      session: { 0: { outside: '6', agrees: false } },
    });
    expect(observed.findings).toEqual([
      {
        kind: 'differs_outside_tests',
        function: 'app/calc.py::scale',
        test: 'tests/t.py::test_a',
        arguments: '(3)',
        in_tests: '7',
        outside: '6',
        calls: 1,
      },
    ]);
  });

  it('names call history only, once per function, when a call answers twice differently', () => {
    const observed = judgeReplay([call('tick', 1, '1'), call('tick', 2, '2')], {
      import_failed: [],
      alone: {
        0: { first: '1', second: '2', agrees: true, repeats: false },
        1: { first: '1', second: '2', agrees: false, repeats: false },
      },
      session: { 0: { outside: '1', agrees: true }, 1: { outside: '3', agrees: false } },
    });
    expect(observed.findings).toMatchObject([
      { kind: 'depends_on_call_history', function: 'app/calc.py::tick', again: '2', calls: 2 },
    ]);
  });

  it('does not compare in order the calls after state it could not replay in their module', () => {
    const lines: RecordedLine[] = [
      { event: 'state', test: 'tests/t.py::test_a', module: 'app.calc' },
      call('level', 0, '3'),
    ];
    const observed = judgeReplay(lines, {
      import_failed: [],
      alone: {},
      session: { 1: { outside: '0', agrees: false } },
    });
    expect(observed).toMatchObject({ findings: [], calls_recorded: 1, calls_compared: 0 });
  });

  it('leaves out the partial last line of a killed run and says when the record was cut', () => {
    const text = `${JSON.stringify(call('scale', 2, '4'))}\n{"event": "cut", "test": "t"}\n{"event": "ca`;
    const lines = parseRecordedCalls(text);
    expect(lines).toHaveLength(2);
    expect(judgeReplay(lines, { import_failed: [], alone: {}, session: {} }).cut).toBe(true);
  });

  it("shows the node recorder's arguments (a JSON array) as a call", () => {
    const line = { ...call('join', 0, '"a-1"'), file: 'src/calc.js', args: '["a",1]' };
    const observed = judgeReplay([line], {
      import_failed: [],
      alone: {},
      session: { 0: { outside: '"a1"', agrees: false } },
    });
    expect(observed.findings).toMatchObject([
      { function: 'src/calc.js::join', arguments: '("a",1)' },
    ]);
  });
});
