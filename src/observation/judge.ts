/**
 * What the replay of the tests' calls outside the harness shows (src/observation/replay.ts): a
 * pure reading of the recorded calls (src/runner/call-recorder.ts) and of the replay's answer.
 * - depends_on_call_history: the same call, made twice in a row in a fresh process, gave two
 *   answers (a counter, a toggle, whatever its name).
 * - differs_outside_tests: the call, replayed in the run's order with no runner loaded, gave
 *   another answer than the test saw (the product looks for the harness, whatever the route).
 * A call after one whose effect could not be replayed (a `state` line: a method, an argument
 * that is not a plain value) into the same module is not compared in order: its state is unknown.
 */
import type { ObservationFinding } from './observation-reason.js';

/** One line of the calls the recorder wrote. */
export type RecordedLine =
  | {
      event: 'call';
      test: string;
      module: string;
      function: string;
      file: string;
      args: string;
      kwargs: string;
      result?: string;
      raised?: boolean;
      opaque?: boolean;
    }
  | { event: 'state'; test: string; module: string | null }
  | { event: 'cut'; test: string }
  | { event: 'end'; sys_path: string[] };

/** The replay's answer, by index of the call's line. */
export interface ReplayAnswer {
  import_failed: string[];
  alone: Record<string, { first: string; second: string; agrees: boolean; repeats: boolean }>;
  session: Record<string, { outside: string; agrees: boolean }>;
}

type ObservationKind = ObservationFinding['kind'];

export interface Observation {
  calls_recorded: number;
  /** True when the record stopped at its bound: later calls were not observed. */
  cut: boolean;
  /** Recorded calls compared outside the harness (in order or alone). */
  calls_compared: number;
  /** Modules the replay could not import: their calls were not compared. */
  import_failed: string[];
  findings: ObservationFinding[];
}

/** Parses the recorder's JSON lines; a partial last line (a killed run) is left out. */
export function parseRecordedCalls(text: string): RecordedLine[] {
  return completeJsonLines<RecordedLine>(text);
}

/** The JSON lines a run's Python wrote; a partial last line (a killed run) is left out. */
export function completeJsonLines<T>(text: string): T[] {
  return text
    .split('\n')
    .slice(0, -1)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as T];
      } catch {
        return [];
      }
    });
}

/** The findings of one replay: one per function and kind, with its first example. */
export function judgeReplay(lines: RecordedLine[], answer: ReplayAnswer): Observation {
  const findings = new Map<string, ObservationFinding>();
  const note = (kind: ObservationKind, example: Omit<ObservationFinding, 'kind' | 'calls'>) => {
    const key = `${kind} ${example.function}`;
    const found = findings.get(key);
    if (found) found.calls += 1;
    else findings.set(key, { kind, ...example, calls: 1 });
  };
  const unknownState = new Set<string | null>();
  let compared = 0;
  lines.forEach((line, index) => {
    if (line.event === 'state') unknownState.add(line.module);
    if (line.event !== 'call') return;
    const alone = answer.alone[index];
    const session = answer.session[index];
    const inOrder = session && !unknownState.has(line.module) ? session : undefined;
    if (alone || inOrder) compared += 1;
    const example = {
      function: `${line.file}::${line.function}`,
      test: line.test,
      arguments: shownArguments(line.args, line.kwargs),
      in_tests: line.raised ? 'raises' : (line.result ?? '(not a plain value)'),
    };
    if (alone && !alone.repeats)
      note('depends_on_call_history', { ...example, outside: alone.first, again: alone.second });
    else if (inOrder && !inOrder.agrees)
      note('differs_outside_tests', { ...example, outside: inOrder.outside });
  });
  // A function whose answers depend on its history explains its answers in order as well.
  const history = new Set(
    [...findings.values()]
      .filter((item) => item.kind === 'depends_on_call_history')
      .map((item) => item.function),
  );
  return {
    calls_recorded: lines.filter((line) => line.event === 'call').length,
    cut: lines.some((line) => line.event === 'cut'),
    calls_compared: compared,
    import_failed: answer.import_failed,
    findings: [...findings.values()].filter(
      (item) => item.kind === 'depends_on_call_history' || !history.has(item.function),
    ),
  };
}

/**
 * `(1, 'a', **{'key': 2})`, from the recorded positional arguments (a Python tuple's repr, or a
 * JSON array from the node recorder) and keyword arguments.
 */
function shownArguments(args: string, kwargs: string): string {
  const positional = args.replace(/^[([]|,?[)\]]$/g, '');
  const keywords = kwargs === '{}' ? '' : kwargs;
  return `(${[positional, keywords && `**${keywords}`].filter(Boolean).join(', ')})`;
}
