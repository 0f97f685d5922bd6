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
}

/**
 * The start of the preload every node process of the run loads first: coachgate's run is the user's
 * run. In a process that runs tests (a `node --test` child, a jest or vitest worker, mocha: each
 * known by what its runner sets, or by its program), coachgate's suffix leaves NODE_OPTIONS, so the
 * programs the tests start inherit the user's environment (with the preloads, a node program a test
 * spawns would load node:test and write its reporter stream to the stdout the test compares). The runner that starts the test processes keeps it, for them. A
 * runner given report arguments reads its command line as its main module starts, synchronously
 * (jest's CommonJS bin): the arguments leave `process.argv` on the next tick, once read, before any
 * test file loads. A runner whose main module is an ES module keeps them (it has not read them yet).
 */
export function userViewSource(added: CoachgateAdditions): string {
  const parts = ["// coachgate: the tests see the user's run, not coachgate's additions to it."];
  if (added.nodeOptions) parts.push(withoutNodeOptions(added.nodeOptions));
  if (added.runnerArgs) parts.push(withoutArgs(added.runnerArgs));
  return parts.join('\n') + '\n';
}

function withoutNodeOptions(suffix: string): string {
  return String.raw`{
  const env = process.env;
  const added = ${JSON.stringify(suffix)};
  const runsTests = (env.NODE_TEST_CONTEXT || '').startsWith('child') ||
    env.JEST_WORKER_ID !== undefined || env.VITEST_POOL_ID !== undefined ||
    ${MOCHA_PROGRAM}.test(process.argv[1] || '');
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
