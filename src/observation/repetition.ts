/**
 * What running a test a second time in the trusted run's process showed
 * (src/runner/repeat-in-harness.ts): a test that passed once and fails when repeated
 * (`fails_when_repeated`) needs the state its first run left, whatever holds it; one that fails
 * when the repeated tests run again from the session's start in reverse order
 * (`fails_in_other_order`, src/runner/other-order.ts) needs what the tests before it left. When the test
 * called a function whose replay outside the harness already showed that state
 * (`depends_on_call_history`), the finding says so: one acknowledgement of the function covers both.
 */
import { readFile, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { RepetitionFinding } from './observation-reason.js';
import { completeJsonLines, parseRecordedCalls, type Observation } from './judge.js';
import { CALLS_FILE, REPEATED_FILE } from './replay.js';

export interface Repetition {
  tests_repeated: number;
  /** Tests whose repetition gave no answer (it ended the process, or ran out of time). */
  unfinished: string[];
  /** Candidates not repeated: the repetitions had used their share of the run's time. */
  over_budget: number;
  findings: RepetitionFinding[];
}

type RepeatedLine =
  | {
      test: string;
      outcome: 'passed' | 'failed' | 'unfinished';
      message?: string;
      /** The tests' run in another order (src/runner/other-order.ts). */
      order?: 'reversed';
    }
  | { outcome: 'over_budget'; count: number };

/** The repeater's answers with the recorded calls' reading; undefined when none was asked for. */
export async function readRepetition(
  reportDirectory: string,
  cwd: string,
  observation: Observation | undefined,
): Promise<Repetition | undefined> {
  const text = await readFile(path.join(reportDirectory, REPEATED_FILE), 'utf8').catch(
    () => undefined,
  );
  if (text === undefined) return undefined;
  const lines = completeJsonLines<RepeatedLine>(text);
  const answers = lines.filter((line) => line.outcome !== 'over_budget');
  // A test that failed when repeated is that finding's: its failure in another order adds nothing.
  const repeatedFailed = new Set(
    answers.filter((a) => a.outcome === 'failed' && !a.order).map((answer) => answer.test),
  );
  const failed = answers.filter(
    (answer) => answer.outcome === 'failed' && !(answer.order && repeatedFailed.has(answer.test)),
  );
  const calls = path.join(reportDirectory, CALLS_FILE);
  const explainers = await historyFunctionsByTest(cwd, calls, observation);
  const inPlace = answers.filter((answer) => !answer.order);
  return {
    tests_repeated: inPlace.length,
    over_budget: lines.reduce(
      (sum, line) => sum + (line.outcome === 'over_budget' ? line.count : 0),
      0,
    ),
    unfinished: inPlace.filter((answer) => answer.outcome === 'unfinished').map(({ test }) => test),
    findings: failed.map(({ test, message, order }) => {
      const explained = explainers.get(test);
      return {
        test,
        ...(message ? { message } : {}),
        ...(order ? { order } : {}),
        ...(explained ? { explained_by: explained } : {}),
      };
    }),
  };
}

/** For each test, the first function it called that the replay found depending on call history. */
async function historyFunctionsByTest(
  cwd: string,
  callsFile: string,
  observation: Observation | undefined,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  const history = new Set(
    (observation?.findings ?? [])
      .filter((finding) => finding.kind === 'depends_on_call_history')
      .map((finding) => finding.function),
  );
  if (history.size === 0) return found;
  const text = await readFile(callsFile, 'utf8').catch(() => '');
  const root = await realpath(cwd);
  for (const line of parseRecordedCalls(text)) {
    if (line.event !== 'call' || found.has(line.test)) continue;
    const name = `${path.relative(root, line.file)}::${line.function}`;
    if (history.has(name)) found.set(line.test, name);
  }
  return found;
}

/**
 * The repetitions an approval rests on: of the tests the Player's change turned from failing to
 * passing (they did not pass on the base's code) and of the tests the Coach cites. A test that
 * passed without the change did not need it; its repetition names nothing of the Player's.
 */
export function judgedRepetition(
  runs: (Repetition | undefined)[],
  passedOnBase: ReadonlySet<string>,
  cited: (id: string) => boolean,
): Repetition | undefined {
  const taken = runs.filter((run) => run !== undefined);
  if (taken.length === 0) return undefined;
  const counts = (test: string) => !passedOnBase.has(test) || cited(test);
  return {
    tests_repeated: taken.reduce((sum, run) => sum + run.tests_repeated, 0),
    over_budget: taken.reduce((sum, run) => sum + run.over_budget, 0),
    unfinished: taken.flatMap((run) => run.unfinished),
    findings: taken.flatMap((run) => run.findings).filter((finding) => counts(finding.test)),
  };
}
