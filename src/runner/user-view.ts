import { MOCHA_PROGRAM } from './runner-programs.js';

/** What coachgate adds to a node run that the tests must not see. */
export interface CoachgateAdditions {
  /** The suffix coachgate appended to NODE_OPTIONS (its preloads, node's test reporters). */
  nodeOptions?: string;
  /**
   * Report arguments given to a runner that parses its command line as it starts (jest),
   * whose tests then read the same `process.argv` (commander's tests parse it): the runner's
   * program, as a regular expression in JavaScript source, and the arguments.
   */
  runnerArgs?: { program: string; args: string[] };
  /** Test-process variables the run's own environment already has (a server inside a runner). */
  inheritedMarkers?: string[];
}

/** What a runner sets in each process that runs tests: node's test children, jest's workers. */
const TEST_PROCESS_MARKERS = ['NODE_TEST_CONTEXT', 'JEST_WORKER_ID'];

/** The markers `env` already has: inherited by every process of the run, they mark none. */
export function inheritedMarkers(env: Record<string, string>): string[] {
  return TEST_PROCESS_MARKERS.filter((name) => env[name] !== undefined);
}

/**
 * The start of the preload every node process of the run loads first: coachgate's run is the user's
 * run. In a process that runs tests (a `node --test` child, a jest worker, mocha: each known by
 * what its runner sets, or by its program), coachgate's suffix leaves NODE_OPTIONS, so the
 * programs the tests start inherit the user's environment (with the preloads, a node program a test
 * spawns would load node:test and write its reporter stream to the stdout the test compares). The
 * runner that starts the test processes keeps it, for them. A
 * runner given report arguments reads its command line as its main module starts, synchronously
 * (jest's CommonJS bin): the arguments leave `process.argv` on the next tick, once read, before any
 * test file loads. A runner whose main module is an ES module keeps them (it has not read them yet).
 */
export function userViewSource(added: CoachgateAdditions): string {
  const parts = ["// coachgate: the tests see the user's run, not coachgate's additions to it."];
  if (added.nodeOptions) {
    const inherited = new Set(added.inheritedMarkers);
    const markers = TEST_PROCESS_MARKERS.filter((name) => !inherited.has(name));
    parts.push(withoutNodeOptions(added.nodeOptions, markers));
  }
  if (added.runnerArgs) parts.push(withoutArgs(added.runnerArgs));
  return parts.join('\n') + '\n';
}

/**
 * The same for vitest, from coachgate's setup file, which runs in its test processes only (their
 * variables are vitest's own, and a server run inside vitest hands them on).
 */
export function vitestUserViewSource(added: CoachgateAdditions): string {
  return added.nodeOptions ? withoutNodeOptions(added.nodeOptions) + '\n' : '';
}

/** Takes `suffix` out of NODE_OPTIONS: in every process, or where one of `markers` says tests run. */
function withoutNodeOptions(suffix: string, markers?: string[]): string {
  const runsTests = markers
    ? String.raw`${JSON.stringify(markers)}.some((name) => env[name] !== undefined) ||
    ${MOCHA_PROGRAM}.test(process.argv[1] || '')`
    : 'true';
  return String.raw`{
  const env = process.env;
  const added = ${JSON.stringify(suffix)};
  const runsTests = ${runsTests};
  const options = env.NODE_OPTIONS || '';
  const at = options.lastIndexOf(added);
  if (runsTests && at >= 0) {
    const own = (options.slice(0, at) + options.slice(at + added.length)).trim();
    if (own) env.NODE_OPTIONS = own;
    else delete env.NODE_OPTIONS;
  }
}`;
}

function withoutArgs({ program, args }: { program: string; args: string[] }): string {
  return String.raw`{
  const args = ${JSON.stringify(args)};
  const argv = process.argv;
  const from = !${program}.test(argv[1] || '') ? -1 : argv.findIndex((_, index) =>
    args.every((arg, offset) => argv[index + offset] === arg));
  // Once a CommonJS main module ran (process.mainModule is set); an ES module one has not yet.
  if (from >= 0) process.nextTick(() => process.mainModule && argv.splice(from, args.length));
}`;
}
