import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { isTestSideFile } from '../scope/test-paths.js';
import { completeJsonLines } from '../observation/judge.js';
import { processEndedCase, type ProcessEnd } from './harness-case.js';
import type { TestCaseResult } from './report/types.js';
import { JEST_PROGRAM, JEST_WORKER_PROGRAM } from './runner-programs.js';

const ENDS_FILE = 'jest-process-ends.jsonl';

/**
 * Ending the process is an observed event under jest. Part of the harness guard every node process
 * of a run loads first; armed in jest's processes (its command line, which runs the tests in band,
 * and its workers). jest hands each test file a copy of `process` made when the file's environment
 * is set up, after this ran, so the copy holds the functions replaced here: `process.reallyExit`
 * (what `process.exit` calls, however it was reached: an alias, a computed name, jest's own wrapper
 * of `exit`), `process.abort`, and `process.kill` of this process, its parent or its group with a
 * signal nothing here handles. Each first writes the frames of the project that led to it (files
 * under the run's directory outside `node_modules`), then does what it was asked. jest's own ends
 * (a worker told to stop) have no project frame and are not written.
 */
export const JEST_PROCESS_END_SOURCE = String.raw`// coachgate: a jest process ended by the project.
const jestProgram = process.argv[1] || '';
if (${JEST_WORKER_PROGRAM}.test(jestProgram) || ${JEST_PROGRAM}.test(jestProgram)) {
  const { appendFileSync, realpathSync } = require('node:fs');
  const { join } = require('node:path');
  const { fileURLToPath } = require('node:url');
  const ends = join(__dirname, '${ENDS_FILE}');
  const root = realpathSync(process.cwd()) + '/';
  const Failure = Error;
  const frames = (callee) => {
    const { prepareStackTrace, stackTraceLimit } = Failure;
    const holder = {};
    try {
      Failure.prepareStackTrace = (_, sites) => sites;
      Failure.stackTraceLimit = 64;
      Failure.captureStackTrace(holder, callee);
      const sites = Array.isArray(holder.stack) ? holder.stack : [];
      const found = [];
      for (const site of sites) {
        let file = site.getFileName() || '';
        if (file.startsWith('file:')) file = fileURLToPath(file);
        if (file.startsWith(root) && !file.includes('/node_modules/'))
          found.push({ file: file.slice(root.length), line: site.getLineNumber() });
      }
      return found;
    } finally {
      Failure.prepareStackTrace = prepareStackTrace;
      Failure.stackTraceLimit = stackTraceLimit;
    }
  };
  const tell = (call, callee) => {
    const found = frames(callee);
    if (found.length > 0) appendFileSync(ends, JSON.stringify({ call, frames: found }) + '\n');
  };
  const ENDING = ['SIGKILL', 'SIGTERM', 'SIGABRT', 'SIGQUIT', 'SIGHUP', 'SIGINT', 'SIGSEGV'];
  const ending = (signal) => {
    const name = typeof signal === 'number'
      ? Object.keys(require('node:os').constants.signals)
        .find((each) => require('node:os').constants.signals[each] === signal)
      : signal === undefined ? 'SIGTERM' : String(signal);
    return ENDING.includes(name) && (name === 'SIGKILL' || process.listenerCount(name) === 0);
  };
  const replace = (name, decides, shown) => {
    const original = process[name];
    if (typeof original !== 'function') return;
    const replaced = function (...args) {
      if (decides(args)) tell(shown(args), replaced);
      return original.apply(this, args);
    };
    Object.defineProperty(replaced, 'name', { value: original.name });
    Object.defineProperty(replaced, 'length', { value: original.length });
    process[name] = replaced;
  };
  // process.exit reaches reallyExit from node's own frame; a direct call is named as made.
  const viaExit = () => /node:internal\/process\/per_thread/.test(new Failure().stack);
  replace('reallyExit', () => true,
    (args) => 'process.' + (viaExit() ? 'exit(' : 'reallyExit(') + (args[0] ?? '') + ')');
  replace('abort', () => true, () => 'process.abort()');
  const own = (pid) => [process.pid, process.ppid, 0, -process.pid].includes(Number(pid));
  replace('kill', ([pid, signal]) => own(pid) && ending(signal),
    ([pid, signal]) => 'process.kill(' + pid + (signal === undefined ? '' : ', ' +
      JSON.stringify(signal)) + ')');
}
`;

/**
 * The ends a run's jest processes wrote, each named by the nearest frame of the project that is not
 * a test file (else the nearest), while the nearest test file ran.
 */
export async function jestProcessEnds(reportDirectory: string): Promise<ProcessEnd[]> {
  const text = await readFile(path.join(reportDirectory, ENDS_FILE), 'utf8').catch(() => '');
  type Written = { call: string; frames: Array<{ file: string; line: number | null }> };
  return completeJsonLines<Written>(text).map(({ call, frames }) => {
    const product = frames.find((frame) => !isTestSideFile(frame.file)) ?? frames[0];
    const test = frames.find((frame) => isTestSideFile(frame.file));
    return {
      call,
      file: product?.file ?? null,
      line: product?.line ?? null,
      nodeid: test?.file ?? null,
    };
  });
}

/** The error case each end becomes in the run's results. */
export function processEndedTests(ends: ProcessEnd[]): TestCaseResult[] {
  return ends.map((end) => {
    const { id, message } = processEndedCase(end);
    return { id, status: 'error', message };
  });
}
