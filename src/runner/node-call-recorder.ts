import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { EsmExports } from '../analysis/esm-exports.js';
import { PLAIN_VALUE_SOURCE } from '../observation/plain-value-js.js';
import { requireFlag } from './harness-guard.js';
import { JEST_CALLS_SOURCE } from './jest-calls.js';
import {
  JEST_PROGRAM,
  JEST_WORKER_PROGRAM,
  MOCHA_PROGRAM,
  VITEST_FORK_PROGRAM,
} from './runner-programs.js';

/** The recorder's file, beside vitest's setup file (src/runner/vitest-equality-watch.ts asks it). */
export const NODE_CALLS_RECORDER_FILE = 'coachgate-node-calls.cjs';
const CONFIG_FILE = 'coachgate_node_observe.json';
/** Each test process writes its calls here (`<pid>` its own): src/observation/replay.ts reads them. */
export const NODE_CALLS = /^calls-\d+\.jsonl$/;

/** What the node recorder observes: src/observation/node-observe.ts computes it. */
export interface NodeObserveConfig {
  /** Absolute real paths of the changed product files whose exports are observed. */
  files: string[];
  /** Absolute real paths of the base's test-side files: calls they make are recorded. */
  callers: string[];
  /** The ES modules among `files`, by file URL: what they export. */
  esm: Record<string, EsmExports>;
}

/**
 * The module node's test children, mocha's and jest's processes load after the harness guard (the
 * same `--require` through NODE_OPTIONS, taken back out of their environment by the guard: the
 * programs the tests start do not inherit it), written only for a trusted run that observes calls (src/observation/). It wraps
 * the exported functions of the Player's changed product modules and records each call whose
 * caller is a base test file and whose arguments are plain values, with the test file that made it
 * and the environment and directory the test gave it; its result when plain, else the call is
 * replayed for its effect only (a promise's value is compared between two calls in a row outside).
 * A call with other arguments, or from another file a test called, is a `state` line: later calls
 * into that module in that process are not compared in order. A call no test frame led to (an
 * import's) is replayed by importing. Calls made inside
 * a recorded call are its own (replaying it reproduces them). CommonJS exports are wrapped when the
 * module loads (`Module.prototype.load`); an ES module is served, when node's loader reads it, as a
 * module re-exporting the original (loaded with a query): its functions through hoisted functions
 * of the wrapper (so a cycle of imports still reaches them early), its other names as live
 * bindings (src/analysis/esm-exports.ts lists both): on Node 20
 * through the loader's read of the source (looked up at each call, as the loaded-file recorder
 * watches it), from Node 22.15 through an in-thread `module.registerHooks` load hook. Each process
 * stops at CALL_LIMIT calls with a `cut` line. Nothing is printed; the argv is untouched. jest
 * compiles modules itself: src/runner/jest-calls.ts.
 */
const RECORDER_SOURCE = String.raw`// coachgate: records the tests' calls into the changed product modules.
const fs = require('node:fs');
const path = require('node:path');
const { fileURLToPath, pathToFileURL } = require('node:url');
const readConfig = () => {
  try {
    return JSON.parse(fs.readFileSync(path.join(__dirname, '${CONFIG_FILE}'), 'utf8'));
  } catch {
    return undefined;
  }
};
const program = (process.argv[1] || '').split('\\').join('/');
const jest = ${JEST_WORKER_PROGRAM}.test(program) || ${JEST_PROGRAM}.test(program);
const vitest = ${VITEST_FORK_PROGRAM}.test(program);
const runsTests = (process.env.NODE_TEST_CONTEXT || '').startsWith('child') ||
  ${MOCHA_PROGRAM}.test(program) || jest || vitest;
const config = runsTests && readConfig();
if (config) {
  ${PLAIN_VALUE_SOURCE.replaceAll('\n', '\n  ')}
  const CALL_LIMIT = 2000;
  const STACK_LIMIT = 40;
  // vitest ends its forks with a signal, before any exit handler: each line is written as seen.
  const BATCH = vitest ? 1 : 200;
  const ORIGINAL = '?coachgate-original';
  const files = new Set(config.files);
  const callers = new Set(config.callers);
  // A scope is prepared when its runner ran a module of the project (not changed code, not a
  // dependency) before the test file, as setup files are run (jest's before the test framework,
  // vitest's before the test file), or when the tests' global is browser-like (a DOM environment):
  // setup files' globals and polyfills and the DOM are the tests' environment, which a replay in a
  // bare node lacks. Its calls are not compared with the test's answer (differs_outside_tests);
  // each is still called twice in a row (depends_on_call_history).
  const dependency = path.sep + 'node_modules' + path.sep;
  const domLike = (global) => global.window !== undefined || global.document !== undefined;
  const projectModule = (file) => typeof file === 'string' && !files.has(file) &&
    file.startsWith(process.cwd() + path.sep) && !file.includes(dependency);
  const out = path.join(__dirname, 'calls-' + process.pid + '.jsonl');
  const startCwd = process.cwd();
  // Where a call is replayed in order (a process; under jest, one test file's module registry),
  // the environment its tests see, and what it held at the start.
  const processScope = (() => {
    const startEnv = { ...process.env };
    return { session: String(process.pid), env: () => process.env, startEnv,
      startNames: Object.keys(startEnv), test: (led) => path.relative(startCwd, led) };
  })();
  const Failure = Error;
  const toString = Function.prototype.toString;
  let depth = 0;
  let count = 0;
  // Written in batches and as the process exits (process.exit included): a killed process loses
  // its last batch, which the replay then does not compare.
  let pending = [];
  const flush = () => {
    if (pending.length > 0) fs.appendFileSync(out, pending.join(''));
    pending = [];
  };
  const write = (line) => {
    pending.push(JSON.stringify(line) + '\n');
    if (pending.length >= BATCH) flush();
  };
  process.on('exit', flush);
  const fileOf = (site) => {
    const name = site.getFileName() || '';
    return name.startsWith('file:') ? fileURLToPath(name) : name;
  };
  // The files of the frames above callee, nearest first, up to limit.
  const callerFiles = (callee, limit) => {
    const { prepareStackTrace, stackTraceLimit } = Failure;
    const holder = {};
    try {
      Failure.prepareStackTrace = (_, sites) => sites;
      Failure.stackTraceLimit = limit;
      Failure.captureStackTrace(holder, callee);
      return Array.isArray(holder.stack) ? holder.stack.map(fileOf) : [];
    } finally {
      Failure.prepareStackTrace = prepareStackTrace;
      Failure.stackTraceLimit = stackTraceLimit;
    }
  };
  // What vitest's worker sets in its own environment as it starts a test file (no test's doing:
  // the replay, which runs no runner, must not get them back).
  const WORKER_SETS = new Set(['VITEST_POOL_ID', 'VITEST_WORKER_ID', 'VITEST_VM_POOL', 'SSR']);
  const surroundings = (record, scope) => {
    // Each read of process.env asks the environment: every variable is read once.
    const env = scope.env();
    const names = Object.keys(env);
    const set = {};
    for (const name of names) {
      const value = env[name];
      if (scope.startEnv[name] !== value && !(vitest && WORKER_SETS.has(name))) set[name] = value;
    }
    const present = new Set(names);
    const unset = scope.startNames.filter((name) => !present.has(name));
    if (Object.keys(set).length > 0 || unset.length > 0) record.env = { set, unset };
    if (process.cwd() !== startCwd) record.cwd = process.cwd();
  };
  // vitest names the running test in its global expect's state (jest's protocol), and evaluates
  // the modules again for each test file: each file's calls are a session of their own.
  const vitestTest = () => {
    try {
      const state = vitest && globalThis[Symbol.for('expect-global')].getState();
      return typeof state.testPath === 'string' ? state : undefined;
    } catch {
      return undefined;
    }
  };
  // The objects the tests got from a call into a changed module, and which function made each:
  // vitest's equality watch compares them again as plain data (src/runner/vitest-equality-watch.ts).
  // Kept under vitest alone, the one reader.
  const made = new WeakMap();
  // Under vitest, the scope of the test file running now (processScope's environment).
  const vitestScope = () => {
    const running = vitestTest();
    if (!running) return processScope;
    const file = path.relative(startCwd, running.testPath);
    return { ...processScope, session: process.pid + ' ' + file,
      test: (led) => running.currentTestName ? file + ' > ' + running.currentTestName
        : path.relative(startCwd, led) };
  };
  // One call of fn, made by whoever called callee (the wrapper the tests reached).
  const record = (fn, self, args, callee, file, name, kind, scope = processScope) => {
    if (depth > 0 || count >= CALL_LIMIT) return fn.apply(self, args);
    const caller = callerFiles(callee, 1)[0] || '';
    // The module's own calls, and those no test led to (an import's): replayed by importing.
    const led = callers.has(caller)
      ? caller
      : !files.has(caller) && callerFiles(callee, STACK_LIMIT).find((each) => callers.has(each));
    if (!led) return fn.apply(self, args);
    if (vitest && scope === processScope) scope = vitestScope();
    const module = scope.session + ':' + file;
    const shownArgs = caller === led ? plainText(args) : undefined;
    // The test file that led to the call (node's runner tells no module which test runs; jest's
    // expect knows the test's name).
    const test = scope.test(led);
    const entry = { event: 'call', test, module, function: name, file, kind,
      process: scope.session, args: shownArgs, kwargs: '{}' };
    if (scope.prepared || domLike(globalThis)) entry.prepared = true;
    if (shownArgs !== undefined) surroundings(entry, scope);
    depth += 1;
    let result;
    try {
      result = fn.apply(self, args);
      if (vitest && result !== null && typeof result === 'object' && !made.has(result))
        made.set(result, { file, function: name });
    } catch (error) {
      entry.raised = true;
      throw error;
    } finally {
      depth -= 1;
      if (shownArgs === undefined) write({ event: 'state', test, module });
      else {
        if (!entry.raised) {
          const shown = plainText(result);
          if (shown === undefined) entry.opaque = true;
          else entry.result = shown;
          // Not awaited here: a handler would change what an unawaited rejection does.
          if (result !== null && typeof result === 'object' && typeof result.then === 'function')
            entry.promise = true;
        }
        write(entry);
        count += 1;
        if (count >= CALL_LIMIT) write({ event: 'cut', test });
      }
    }
    return result;
  };
  const isClass = (fn) => /^class\b/.test(toString.call(fn));
  const describeAs = (wrapper, fn) => {
    // A function of a jest test's own realm stays one (instanceof Function in the test).
    Object.setPrototypeOf(wrapper, Object.getPrototypeOf(fn));
    Object.defineProperty(wrapper, 'name', { value: fn.name });
    Object.defineProperty(wrapper, 'length', { value: fn.length });
    return Object.assign(wrapper, fn);
  };
  // One wrapper per function: a module that hands its export out again hands out the same one.
  const wrappers = new WeakMap();
  const wrap = (fn, file, name, kind, scope) => {
    if (typeof fn !== 'function' || isClass(fn)) return fn;
    if (wrappers.has(fn)) return wrappers.get(fn);
    const wrapped = function (...args) {
      if (new.target) return Reflect.construct(fn, args, new.target);
      return record(fn, this, args, wrapped, file, name, kind, scope);
    };
    wrappers.set(fn, wrapped);
    wrappers.set(wrapped, wrapped);
    return describeAs(wrapped, fn);
  };
  // A CommonJS module's exported functions, once its body ran.
  const wrapExports = (module, file, kind, scope) => {
    const exported = module.exports;
    if (typeof exported === 'function') {
      module.exports = wrap(exported, file, 'module.exports', kind, scope);
    } else if (exported && typeof exported === 'object') {
      for (const key of Object.keys(exported)) {
        const described = Object.getOwnPropertyDescriptor(exported, key);
        if (described && described.writable && typeof described.value === 'function')
          exported[key] = wrap(described.value, file, key, kind, scope);
      }
    }
  };
  // An ES module's function, reached through the hoisted function of its wrapper module (a cycle
  // of imports may call it before the wrapper module ran), looked up in the original at each call.
  const forward = (forwarder, namespace, name, file, self, args, newTarget) => {
    const fn = namespace[name];
    if (newTarget) return Reflect.construct(fn, args, newTarget);
    return record(fn, self, args, forwarder, file, name, 'esm');
  };
  const named = (forwarder, namespace, name) => {
    const fn = namespace[name];
    if (typeof fn === 'function') describeAs(forwarder, fn);
  };
  const madeBy = (value) => made.get(value);
  const changed = (file) => files.has(file);
  module.exports = { forward, named, madeBy, changed };
  if (vitest) {
    // vitest's module runner evaluates each module of the project as a function compiled by
    // vm.runInThisContext under the module's file name, and given, sixth, the function defining
    // each export with a getter (__vite_ssr_exportName__): a changed module's exports are
    // defined through one whose getter hands out the wrapped function.
    const vm = require('node:vm');
    const compile = vm.runInThisContext;
    // A CommonJS module it runs (module.exports, exports.name) fills the same exports object
    // otherwise: its default is module.exports, each member a getter of its own; wrapped once the
    // module ran, before its importer reads them.
    const EXPORT_NAME = 5;
    const wrapRunCommonJs = (exports, file) => {
      const holder = { exports: exports.default };
      wrapExports(holder, file, 'cjs');
      exports.default = holder.exports;
      for (const key of Object.keys(exports)) {
        const described = Object.getOwnPropertyDescriptor(exports, key);
        if (key === 'default' || !described.configurable || !described.get) continue;
        const get = described.get;
        Object.defineProperty(exports, key, { ...described, get: () => wrap(get(), file, key, 'cjs') });
      }
    };
    vm.runInThisContext = function runInThisContext(code, options) {
      const made = compile.apply(this, arguments);
      const file = options !== null && typeof options === 'object' ? options.filename : undefined;
      const running = vitestTest();
      if (running && file === running.testPath) processScope.sawTest = true;
      else if (!processScope.sawTest && projectModule(file)) processScope.prepared = true;
      if (typeof made !== 'function' || !files.has(file)) return made;
      return function (...args) {
        const [exports] = args;
        const define = args[EXPORT_NAME];
        let esm = false;
        if (typeof define === 'function')
          args[EXPORT_NAME] = (name, getter) => {
            esm = true;
            return define(name, () => wrap(getter(), file, name, 'esm'));
          };
        return Promise.resolve(made.apply(this, args)).then((value) => {
          if (!esm && exports && typeof exports === 'object') wrapRunCommonJs(exports, file);
          return value;
        });
      };
    };
  }
  const Module = require('node:module');
  const load = Module.prototype.load;
  Module.prototype.load = function (filename) {
    const result = load.apply(this, arguments);
    if (files.has(filename) && !config.esm[pathToFileURL(filename).href])
      wrapExports(this, filename, 'cjs');
    return result;
  };
  if (jest) {
    ${JEST_CALLS_SOURCE.replaceAll('\n', '\n    ')}
  }
  const self = pathToFileURL(__filename).href;
  const wrapperSource = (url) => {
    const { functions, others } = config.esm[url];
    const original = JSON.stringify(url + ORIGINAL);
    const file = JSON.stringify(fileURLToPath(url));
    const lines = [
      'import { forward as $coachgate, named as $named } from ' + JSON.stringify(self) + ';',
      'import * as $original from ' + original + ';',
    ];
    // Every name, whether or not the server's parse listed it; the ones below take precedence.
    lines.push('export * from ' + original + ';');
    if (others.length > 0) {
      const names = others.map((name) => JSON.stringify(name)).join(', ');
      lines.push('export { ' + names + ' } from ' + original + ';');
    }
    functions.forEach((name, index) => {
      const shown = JSON.stringify(name);
      lines.push(
        'function f' + index + '(...args) {',
        '  return $coachgate(f' + index + ', $original, ' + shown + ', ' + file +
          ', this, args, new.target);',
        '}',
        '$named(f' + index + ', $original, ' + shown + ');',
        'export { f' + index + ' as ' + shown + ' };');
    });
    return lines.join('\n') + '\n';
  };
  const served = (url) => typeof url === 'string' && config.esm[url] !== undefined;
  // Hooks a project registers load on a thread of their own, which loads this file too: Node 22
  // fails a load there that meets a registerHooks hook.
  if (Module.registerHooks && !require('node:worker_threads').isInternalThread) {
    Module.registerHooks({
      load(url, context, next) {
        if (!served(url)) return next(url, context);
        return { format: 'module', source: wrapperSource(url), shortCircuit: true };
      },
    });
  } else if (!Module.registerHooks) {
    // Node 20's loader reads each ES module's source through fs.promises.readFile, with its URL.
    const fromLoader = (callee) => {
      const { prepareStackTrace, stackTraceLimit } = Failure;
      const holder = {};
      try {
        Failure.prepareStackTrace = (_, sites) => sites;
        Failure.stackTraceLimit = 3;
        Failure.captureStackTrace(holder, callee);
        return (holder.stack || []).some(
          (site) => site.getFileName() === 'node:internal/modules/esm/load');
      } finally {
        Failure.prepareStackTrace = prepareStackTrace;
        Failure.stackTraceLimit = stackTraceLimit;
      }
    };
    const readFile = fs.promises.readFile;
    const watched = function (file) {
      if (file instanceof URL && served(file.href) && fromLoader(watched))
        return Promise.resolve(Buffer.from(wrapperSource(file.href)));
      return readFile.apply(this, arguments);
    };
    Object.defineProperty(watched, 'name', { value: 'readFile' });
    fs.promises.readFile = watched;
  }
}
`;

/** Puts the recorder and what it observes in the run's report directory; returns its file. */
export async function writeNodeCallRecorder(
  reportDirectory: string,
  config: NodeObserveConfig,
): Promise<string> {
  const file = path.join(reportDirectory, NODE_CALLS_RECORDER_FILE);
  await writeFile(path.join(reportDirectory, CONFIG_FILE), JSON.stringify(config));
  await writeFile(file, RECORDER_SOURCE);
  return file;
}

/** The NODE_OPTIONS flag loading the recorder. */
export function nodeCallsFlag(reportDirectory: string): string {
  return requireFlag(path.join(reportDirectory, NODE_CALLS_RECORDER_FILE));
}
