import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { completeJsonLines } from '../observation/judge.js';
import type { ProcessEnd } from './harness-case.js';
import { requireFlag } from './harness-guard.js';
import { VITEST_FORK_PROGRAM } from './runner-programs.js';

const WATCH_FILE = 'coachgate-vitest-end.cjs';
const ENDS = /^ended-\d+\.jsonl$/;

/**
 * Ending the test process is an observed event under vitest too. vitest replaces `process.exit` in
 * its forks with one that fails the test; what still ends a fork mid-test (`process.reallyExit`,
 * which node's own exit calls, `process.abort`, a signal the fork sends itself, its group or
 * vitest's main process) leaves the tests after it with no verdict, and vitest's JUnit report
 * lists the running test as passed. A module every vitest fork loads first (`--require` through
 * NODE_OPTIONS, taken back out of the tests' environment by coachgate's setup file) replaces
 * those, on `process`, by functions that first write, synchronously, the call, the nearest frame
 * of the project that made it (file and line, relative to the run's directory) and the running
 * test (vitest's global expect names it) to a list of the fork's own, then call the original.
 * Whatever name or route reached it, it is the same function. A call no frame of the project made
 * is vitest's own (it ends its forks through the exit it saved); a signal 0 (a liveness probe) or
 * one the process handles ends nothing. Only vitest's forks arm it; a program a test starts does
 * not load it.
 */
const WATCH_SOURCE = String.raw`// coachgate: a vitest fork ended by the code under test is named.
const program = (process.argv[1] || '').split('\\').join('/');
if (${VITEST_FORK_PROGRAM}.test(program)) {
  const { appendFileSync, realpathSync } = require('node:fs');
  const { join, relative, sep } = require('node:path');
  const { fileURLToPath } = require('node:url');
  const list = join(__dirname, 'ended-' + process.pid + '.jsonl');
  const root = realpathSync(process.cwd());
  const Failure = Error;
  const { signals } = require('node:os').constants;
  // Signals whose default action ends the process, by name and number.
  const ENDING = ['SIGKILL', 'SIGTERM', 'SIGABRT', 'SIGQUIT', 'SIGHUP', 'SIGINT', 'SIGSEGV',
    'SIGBUS'];
  const nameOf = (signal) =>
    typeof signal === 'number' ? Object.keys(signals).find((name) => signals[name] === signal)
      : signal;
  // The stack as vitest's own source maps show it (the lines of the file as written), nearest first.
  const where = (callee) => {
    const holder = {};
    const { stackTraceLimit } = Failure;
    try {
      Failure.stackTraceLimit = 64;
      Failure.captureStackTrace(holder, callee);
    } finally {
      Failure.stackTraceLimit = stackTraceLimit;
    }
    const frames = String(holder.stack).matchAll(/(file:\/\/)?(\/[^\s()]+?):(\d+):\d+\)?$/gm);
    for (const [, url, path, line] of frames) {
      const file = url ? fileURLToPath(url + path) : path;
      if (file.startsWith(root + sep) && !file.includes(sep + 'node_modules' + sep))
        return { file: relative(root, file), line: Number(line) };
    }
    return undefined;
  };
  const running = () => {
    try {
      const state = globalThis[Symbol.for('expect-global')].getState();
      const name = state.currentTestName;
      return name ? relative(root, state.testPath) + ' > ' + name : null;
    } catch {
      return null;
    }
  };
  // vitest's own ending of a fork (its saved process.exit) has no frame of the project.
  const tell = (call, callee) => {
    const frame = where(callee);
    if (frame) appendFileSync(list, JSON.stringify({ call, ...frame, nodeid: running() }) + '\n');
  };
  const shown = (args) => args.map((each) => JSON.stringify(each) ?? String(each)).join(', ');
  const watch = (name, ends) => {
    const original = process[name];
    if (typeof original !== 'function') return;
    const watched = {
      [name](...args) {
        if (ends(args)) tell('process.' + name + '(' + shown(args) + ')', watched);
        return original.apply(this, args);
      },
    }[name];
    Object.defineProperty(process, name, {
      ...Object.getOwnPropertyDescriptor(process, name),
      value: watched,
    });
  };
  watch('reallyExit', () => true);
  watch('abort', () => true);
  watch('kill', ([pid, signal = 'SIGTERM']) => {
    const target = Number(pid);
    // The fork, its group (0), vitest's main process, or a group either leads; a test killing the
    // group of a child it started (-child.pid) ends nothing of the run.
    const self = [process.pid, process.ppid, 0].includes(Math.abs(target));
    const name = nameOf(signal);
    return self && ENDING.includes(name) && (target !== process.pid || !process.listenerCount(name));
  });
}
`;

/** Puts the watch in the run's report directory; returns its file. */
export async function writeVitestEndWatch(reportDirectory: string): Promise<string> {
  const file = path.join(reportDirectory, WATCH_FILE);
  await writeFile(file, WATCH_SOURCE);
  return file;
}

/** The NODE_OPTIONS flag loading the watch. */
export function vitestEndFlag(reportDirectory: string): string {
  return requireFlag(path.join(reportDirectory, WATCH_FILE));
}

/** The ends the run's vitest forks told, in the order of their lists. */
export async function readVitestEnds(reportDirectory: string): Promise<ProcessEnd[]> {
  const lists = (await readdir(reportDirectory)).filter((name) => ENDS.test(name)).sort();
  const texts = await Promise.all(
    lists.map((name) => readFile(path.join(reportDirectory, name), 'utf8').catch(() => '')),
  );
  return texts.flatMap((text) => completeJsonLines<ProcessEnd>(text));
}
