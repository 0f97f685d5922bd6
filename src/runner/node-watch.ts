import { realpathSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { isTestSideFile } from '../scope/test-paths.js';
import {
  equalityByTypeMessage,
  HARNESS_CHANGED,
  processEndedCase,
  type PassedByType,
  type ProcessEnd,
} from './harness-case.js';
import { requireFlag } from './harness-guard.js';
import { NODE_EQUALITY_SOURCE, type NodeEqualityConfig } from './node-equality-watch.js';
import { NODE_PROCESS_END_SOURCE } from './node-process-end.js';
import type { TestCaseResult } from './report/types.js';
import { MOCHA_PROGRAM } from './runner-programs.js';

const WATCH_FILE = 'coachgate-node-watch.cjs';
const EQUALITY_CONFIG = 'coachgate_node_equality.json';
const EVENTS = /^node-watch-\d+\.jsonl$/;
/** Bytes read of one process's events: the watch tells few (an end, 50 equalities). */
const EVENTS_BYTES = 1024 * 1024;

/**
 * The module every node process of a run that may start `node --test`, mocha or a plain `node`
 * script loads first (`--require` through NODE_OPTIONS, before the harness guard, which then takes
 * the `node:assert` members as the equality watch left them; the guard takes the flag back out of
 * the test processes' environment). It arms in node's test children, mocha's process and the plain
 * script the test command names (its exit status is the verdict, src/runner/exit-status.ts), and
 * tells what it observes as JSON lines in the report directory, one file per process, written as
 * seen (the process may be ending): the product ending the process (src/runner/node-process-end.ts),
 * and in a trusted run, equality decided by the Player's types (src/runner/node-equality-watch.ts).
 * The test that runs is known from the runner: a root `beforeEach` of `node:test`, mocha's runner's
 * `test` event. Nothing is printed; the argv is untouched.
 */
function watchSource(scripts: readonly string[]): string {
  return String.raw`// coachgate: what the code under test does that the tests cannot see.
const program = (process.argv[1] || '').split('\\').join('/');
const nodeTestChild = (process.env.NODE_TEST_CONTEXT || '').startsWith('child');
const mocha = ${MOCHA_PROGRAM}.test(program);
const scripts = ${JSON.stringify(scripts)};
const isScript = () => {
  try {
    const main = require('node:fs').realpathSync(process.argv[1]);
    return scripts.includes(main);
  } catch {
    return false;
  }
};
const script = !nodeTestChild && !mocha && scripts.length > 0 && isScript();
if (nodeTestChild || mocha || script) {
  const fs = require('node:fs');
  const path = require('node:path');
  const { fileURLToPath } = require('node:url');
  const append = fs.appendFileSync;
  const out = path.join(__dirname, 'node-watch-' + process.pid + '.jsonl');
  const tell = (record) => append(out, JSON.stringify(record) + '\n');
  const root = fs.realpathSync(process.cwd()) + '/';
  const Failure = Error;
  // The nearest frame above callee in a file of the project (not node's, a package's or ours).
  const projectSite = (callee) => {
    const { prepareStackTrace, stackTraceLimit } = Failure;
    const holder = {};
    let sites;
    try {
      Failure.prepareStackTrace = (_, found) => found;
      Failure.stackTraceLimit = 64;
      Failure.captureStackTrace(holder, callee);
      sites = holder.stack; // made as it is first read
    } finally {
      Failure.prepareStackTrace = prepareStackTrace;
      Failure.stackTraceLimit = stackTraceLimit;
    }
    for (const site of Array.isArray(sites) ? sites : []) {
      let name = site.getFileName() || '';
      if (name.startsWith('file:')) name = fileURLToPath(name);
      if (name.startsWith(root) && !name.includes('/node_modules/') && name !== __filename)
        return { file: name.slice(root.length), path: name, line: site.getLineNumber() };
    }
    return undefined;
  };
  const describeAs = (wrapper, fn) => {
    Object.defineProperty(wrapper, 'name', { value: fn.name });
    Object.defineProperty(wrapper, 'length', { value: fn.length });
    return Object.assign(wrapper, fn);
  };
  let current;
  const currentTest = () => current;
  if (nodeTestChild) {
    require('node:test').beforeEach((context) => {
      current = context && context.name;
    });
  } else if (mocha) {
    try {
      const exported = require('node:module').createRequire(program)('mocha');
      const Runner = (exported.Mocha || exported).Runner;
      const run = Runner.prototype.run;
      Runner.prototype.run = function (...args) {
        this.on('test', (test) => {
          current = test.fullTitle();
        });
        return run.apply(this, args);
      };
    } catch {
      // not a mocha this watch can reach: ends and comparisons name no test
    }
  }
  ${NODE_PROCESS_END_SOURCE.replaceAll('\n', '\n  ')}
  watchProcessEnd(script);
  let equality;
  try {
    equality = !script && JSON.parse(fs.readFileSync(path.join(__dirname, '${EQUALITY_CONFIG}'), 'utf8'));
  } catch {
    equality = undefined;
  }
  if (equality) {
    ${NODE_EQUALITY_SOURCE.replaceAll('\n', '\n    ')}
    watchEquality(equality);
  }
}
`;
}

/**
 * Puts the watch in the run's report directory (read-only in the sandbox), with the plain script
 * the command runs (`script`, as written, from `cwd`) and, for a trusted run, the equality watch's
 * request; returns the watch's file.
 */
export async function writeNodeWatch(
  reportDirectory: string,
  cwd: string,
  script: string | undefined,
  equality: NodeEqualityConfig | undefined,
): Promise<string> {
  const scripts = script === undefined ? [] : scriptPaths(path.resolve(realpathSync(cwd), script));
  if (equality)
    await writeFile(path.join(reportDirectory, EQUALITY_CONFIG), JSON.stringify(equality));
  const file = path.join(reportDirectory, WATCH_FILE);
  await writeFile(file, watchSource(scripts));
  return file;
}

/** The file node runs for `node <file>`: as named, or with the extension node adds. */
function scriptPaths(file: string): string[] {
  return ['', '.js', '.cjs', '.mjs'].map((extension) => file + extension);
}

/** The NODE_OPTIONS flag loading the watch. */
export function nodeWatchFlag(reportDirectory: string): string {
  return requireFlag(path.join(reportDirectory, WATCH_FILE));
}

/** A chai matcher added or overwritten from a changed product file. */
interface MatcherChanged {
  api: string;
  name: string;
  file: string;
  line: number;
  nodeid: string | null;
}

type WatchEvent =
  | ({ event: 'exit' } & ProcessEnd)
  | ({ event: 'equality' } & PassedByType)
  | ({ event: 'matcher' } & MatcherChanged);

/**
 * What the watch told: the product's ends of a process, comparisons its types decided, matchers
 * it rewrote.
 */
export interface NodeWatchEvents {
  ends: ProcessEnd[];
  equalities: PassedByType[];
  matchers: MatcherChanged[];
}

/** Reads the watch's files; a line cut short (a process killed while writing) is left out. */
export async function readNodeWatch(reportDirectory: string): Promise<NodeWatchEvents> {
  const names = (await readdir(reportDirectory)).filter((name) => EVENTS.test(name));
  const events: NodeWatchEvents = { ends: [], equalities: [], matchers: [] };
  for (const name of names) {
    const text = (await readFile(path.join(reportDirectory, name), 'utf8')).slice(0, EVENTS_BYTES);
    for (const line of text.split('\n').slice(0, -1)) {
      let record: WatchEvent;
      try {
        record = JSON.parse(line) as WatchEvent;
      } catch {
        continue;
      }
      if (record.event === 'exit') events.ends.push(record);
      else if (record.event === 'equality') events.equalities.push(record);
      else if (record.event === 'matcher') events.matchers.push(record);
    }
  }
  return events;
}

/**
 * The product's ends of a process outside the tests' own files: a test may end its own process,
 * the code under test must not.
 */
export function productEnds(events: NodeWatchEvents): ProcessEnd[] {
  return events.ends.filter((end) => end.file !== null && !isTestSideFile(end.file));
}

/**
 * The cases the events add to a run's per-test results: each product end names its file and line;
 * matchers the product rewrote and comparisons held only by the Player's types are one harness
 * case, as in the pytest report.
 */
export function nodeWatchCases(events: NodeWatchEvents): TestCaseResult[] {
  const cases: TestCaseResult[] = productEnds(events).map((end) => ({
    ...processEndedCase(end),
    status: 'error',
  }));
  const [first, ...more] = events.equalities;
  const messages = [
    ...events.matchers.map(matcherMessage),
    ...(first
      ? [more.length === 0 ? equalityByTypeMessage(first) : equalitiesMessage(first, more)]
      : []),
  ];
  if (messages.length > 0)
    cases.push({ id: HARNESS_CHANGED, status: 'error', message: messages.join(' ') });
  return cases;
}

function matcherMessage(changed: MatcherChanged): string {
  const when = changed.nodeid ? `while ${changed.nodeid} ran` : 'as the tests loaded';
  return (
    `${changed.api}(${JSON.stringify(changed.name)}) from ${changed.file}:${changed.line} (a ` +
    `changed product file) ${when}: an assertion rewritten by the code it judges.`
  );
}

/** Several comparisons: each test and type first (a refusal shows the message's head), then one whole. */
function equalitiesMessage(first: PassedByType, more: readonly PassedByType[]): string {
  const named = [first, ...more].map(
    (passed) => `${passed.nodeid} (${passed.type}, ${passed.type_file})`,
  );
  return (
    `${named.length} comparisons passed only by the equality of a type from a changed file: ` +
    `${[...new Set(named)].join(', ')}. The first: ${equalityByTypeMessage(first)}`
  );
}
