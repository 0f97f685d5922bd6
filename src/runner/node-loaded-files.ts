import { open, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isTestSideFile } from '../scope/test-paths.js';
import { requireFlag } from './harness-guard.js';
import {
  JEST_PROGRAM,
  JEST_WORKER_PROGRAM,
  MOCHA_PROGRAM,
  VITEST_FORK_PROGRAM,
} from './runner-programs.js';

const RECORDER_FILE = 'coachgate-node-loaded.cjs';
const VITEST_REPORTER_FILE = 'coachgate-vitest-loaded.mjs';

/**
 * The files a node test process loads from outside `node_modules`, listed so the server knows which
 * of the Player's changed files the tests ran (an evaluation must not approve code the trusted runs
 * never took: src/evaluation/evaluate.ts). pytest's reporter lists `sys.modules`; node has no such
 * list, so a module loaded first in every node process of the run (`--require` through
 * NODE_OPTIONS, as the harness guard is) lists them when the process exits: CommonJS ones from the
 * require cache, ES modules as an in-process loader hook saw them load (`module.registerHooks`,
 * Node 22.15 and later). Node 20 has no such hook, but its loader reads each module's source
 * through `fs.promises.readFile` or `fs.readFileSync`, looked up at every call, with the module's
 * URL: a read made from the loader's own frame is a load (a test reading a source file as data is
 * not). Where neither sees every load (hooks registered by the project load on a thread of their
 * own; a node that reads otherwise) they come from V8's best-effort coverage, read once at exit
 * (the loader's module map holds every module's script for the life of the process, so the
 * coverage names each one). That walk of the heap costs about 5 ms of each test process on Node
 * 20, where the reads cost next to nothing; `module.register` would run our hook on a thread of its
 * own, about 75 ms of CPU per test file. jest compiles each module of a test file itself
 * (`vm.compileFunction` or a `vm.Script`, with the file's name), so in jest's processes that is
 * what it records. It arms only in test processes:
 * `node --test` children (node sets NODE_TEST_CONTEXT for them), mocha's and jest's (the program is
 * the runner's own file, its `.bin` link, or a jest worker), and vitest's forks; npm, tsc and the
 * other programs of the run load it and do nothing. Each process appends to a list of its own in the report directory.
 */
const RECORDER_SOURCE = String.raw`// coachgate: which files the tests load.
const program = (process.argv[1] || '').split('\\').join('/');
const mocha = ${MOCHA_PROGRAM}.test(program);
const jest = ${JEST_WORKER_PROGRAM}.test(program) || ${JEST_PROGRAM}.test(program);
// vitest's own reporter lists its module graph; its forks add what the graph never holds: what
// their code reads and requires.
const vitest = ${VITEST_FORK_PROGRAM}.test(program);
if ((process.env.NODE_TEST_CONTEXT || '').startsWith('child') || mocha || jest || vitest) {
  const { appendFileSync } = require('node:fs');
  const Module = require('node:module');
  const { registerHooks } = Module;
  const { pathToFileURL } = require('node:url');
  const list = require('node:path').join(__dirname, 'loaded-' + process.pid + '.txt');
  // Not coachgate's own preloads, which sit beside the list.
  const ours = pathToFileURL(__dirname).href + '/';
  const own = (url) =>
    url.startsWith('file:') && !url.includes('/node_modules/') && !url.startsWith(ours);
  if (jest) {
    // jest compiles every module of a test file itself, in its own context, so no loader sees
    // them: through vm.compileFunction from jest 30, a vm.Script before.
    const vm = require('node:vm');
    const note = (options) => {
      const file = options && options.filename;
      if (typeof file === 'string' && file.startsWith('/') && !file.includes('/node_modules/'))
        appendFileSync(list, file + '\n');
    };
    const compile = vm.compileFunction;
    vm.compileFunction = function (code, params, options) {
      note(options);
      return compile.call(this, code, params, options);
    };
    vm.Script = class Script extends vm.Script {
      constructor(code, options) {
        super(code, options);
        note(options);
      }
    };
  }
  const hooked = new Set();
  const noteLoad = (url) => {
    if (own(url)) hooked.add(url);
  };
  // Hooks given to --loader or module.register load modules on a thread of their own, unseen
  // here: a process with such hooks reads the coverage. Their thread loads this file too, and
  // Node 22 fails a load there that meets a registerHooks hook, so none is made there.
  let seesAll = !/--(experimental-)?loader\b/.test(
    process.execArgv.join(' ') + ' ' + (process.env.NODE_OPTIONS || ''));
  let watching = false;
  if (registerHooks && !jest && seesAll && !require('node:worker_threads').isInternalThread) {
    registerHooks({
      load(url, context, next) {
        noteLoad(url);
        return next(url, context);
      },
    });
    watching = true;
  }
  // The frames above a call, as V8's call sites; the limit reaches past a library's own frames.
  const callSites = (callee, limit) => {
    const { prepareStackTrace, stackTraceLimit } = Error;
    const frames = {};
    try {
      Error.prepareStackTrace = (_, sites) => sites;
      Error.stackTraceLimit = limit;
      Error.captureStackTrace(frames, callee);
      return Array.isArray(frames.stack) ? frames.stack : [];
    } finally {
      Error.prepareStackTrace = prepareStackTrace;
      Error.stackTraceLimit = stackTraceLimit;
    }
  };
  const fromLoader = (callee) =>
    callSites(callee, 1).some((site) => site.getFileName() === 'node:internal/modules/esm/load');
  // A file of the tree that code reads may be run from its source (vm, eval, new Function): it
  // is listed with its reader, the nearest frame that is neither node's, the environment's nor
  // ours, and the server keeps it unless the reader is test side (an expected-value file).
  const reads = new Map();
  const { resolve } = require('node:path');
  const { fileURLToPath } = require('node:url');
  const asPath = (file) => {
    try {
      const name = file instanceof URL ? fileURLToPath(file) : file;
      const text = Buffer.isBuffer(name) ? name.toString() : name;
      // Most reads are the environment's (every module a runner requires): no resolve for them.
      return typeof text === 'string' && !text.includes('/node_modules/') ? resolve(text) : undefined;
    } catch {
      return undefined;
    }
  };
  const readerOf = (callee) => {
    for (const site of callSites(callee, 64)) {
      let name = site.getFileName() || '';
      if (name.startsWith('file:')) name = fileURLToPath(name);
      if (name.startsWith('/') && !name.includes('/node_modules/') && name !== __filename)
        return name;
    }
    return undefined;
  };
  // Only reading opens: a write-only flag (w, a, O_WRONLY) writes.
  const reading = (flags) =>
    flags === undefined || flags === null || (typeof flags === 'string' ? /^r/.test(flags)
      : typeof flags !== 'number' || (flags & 3) !== 1);
  // Paths as the code names them that need no more look: the environment's, or read enough.
  const settled = new Set();
  const noteRead = (file, callee, flags) => {
    if (typeof file === 'string' && settled.has(file)) return;
    const name = typeof file === 'number' || !reading(flags) ? undefined : asPath(file);
    if (!name || name.includes('/node_modules/') || name.startsWith(__dirname + '/')) {
      if (typeof file === 'string' && name !== undefined) settled.add(file);
      return;
    }
    let seen = reads.get(name);
    if (!seen) reads.set(name, (seen = { readers: new Set(), asked: 0 }));
    // A few readers per file are enough for the server (one outside the tests), and a file read
    // in a loop costs a stack walk for its first reads only.
    if (seen.readers.size >= 4 || seen.asked >= 64) {
      if (typeof file === 'string' && settled.size < 100000) settled.add(file);
      return;
    }
    seen.asked += 1;
    const reader = readerOf(callee);
    if (!reader || seen.readers.has(reader)) return;
    seen.readers.add(reader);
    // vitest ends its forks with a signal, before any exit handler: each read is written as seen.
    if (vitest) appendFileSync(list, name + '\t' + reader + '\n');
  };
  const fs = require('node:fs');
  // Node 20's loader reads each ES module's source through fs.promises.readFile (an import) or
  // fs.readFileSync (what a required ES module imports), with its URL, from its own frame.
  const esmLoads = !registerHooks && !jest && seesAll;
  const watchReads = (holder, name) => {
    const read = holder[name];
    const opens = name === 'open' || name === 'openSync';
    if (typeof read !== 'function') return;
    const watched = function (file) {
      if (esmLoads && file instanceof URL && fromLoader(watched)) {
        watching = true; // this node reads through it: every load is seen
        noteLoad(file.href);
      } else noteRead(file, watched, opens ? arguments[1] : undefined);
      return read.apply(this, arguments);
    };
    Object.defineProperty(watched, 'name', { value: name });
    holder[name] = watched;
  };
  for (const name of ['readFileSync', 'readFile', 'openSync', 'open', 'createReadStream'])
    watchReads(fs, name);
  for (const name of ['readFile', 'open']) watchReads(fs.promises, name);
  const register = Module.register;
  if (typeof register === 'function')
    Module.register = function (specifier, parent) {
      seesAll = false;
      // The hooks module loads on the hooks' own thread, which no list here sees: named as it is
      // registered (a relative or file specifier; a package's is the environment's).
      try {
        const base = parent && typeof parent === 'object' && !(parent instanceof URL)
          ? parent.parentURL : parent;
        if (/^(?:\.{1,2}\/|\/|file:)/.test(String(specifier)))
          noteLoad(new URL(String(specifier), base || pathToFileURL(process.cwd() + '/')).href);
      } catch {
        // Not a URL node could load either: register reports it.
      }
      return register.apply(this, arguments);
    };
  const esModules = () => {
    // jest's modules were listed as it compiled them.
    if (jest ? registerHooks : seesAll && watching) return [...hooked];
    let urls = [];
    try {
      const session = new (require('node:inspector').Session)();
      session.connect();
      session.post('Profiler.enable');
      // An in-process session answers at once.
      session.post('Profiler.getBestEffortCoverage', (error, coverage) => {
        if (!error) urls = coverage.result.map((script) => script.url).filter(own);
      });
      session.disconnect();
    } catch {
      // A node built without the inspector: CommonJS modules only.
    }
    return [...hooked, ...urls];
  };
  process.on('exit', () => {
    const files = Object.keys(Module._cache)
      .map((file) => pathToFileURL(file).href)
      .filter(own);
    const loaded = [...new Set([...files, ...esModules()])];
    for (const [file, { readers }] of reads)
      for (const reader of readers) loaded.push(file + '\t' + reader);
    if (loaded.length > 0) appendFileSync(list, loaded.join('\n') + '\n');
  });
}
`;

/**
 * vitest loads the test files and what they import through vite, not node's loader: its module
 * graph (in the main process, one per project) holds every module a test process asked for, computed
 * imports included. A reporter lists it when the run ends (`onTestRunEnd` from vitest 3, `onFinished`
 * before; the project's server is `vite` from 3, `server` before). Modules reached by `require`
 * inside a test process load outside the graph and are not listed.
 */
const VITEST_REPORTER_SOURCE = String.raw`// coachgate: which files the vitest run's tests load.
import { appendFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const self = fileURLToPath(import.meta.url);
export default class CoachgateLoadedFiles {
  onInit(vitest) {
    this.vitest = vitest;
  }
  onTestRunEnd() {
    this.list();
  }
  onFinished() {
    this.list();
  }
  list() {
    if (this.listed) return;
    this.listed = true;
    const files = new Set();
    for (const project of this.vitest?.projects ?? []) {
      const server = project.vite ?? project.server;
      const environments = Object.values(server?.environments ?? {});
      for (const graph of [server?.moduleGraph, ...environments.map((each) => each.moduleGraph)])
        for (const file of graph?.fileToModulesMap?.keys() ?? [])
          if (!file.includes('/node_modules/') && file !== self) files.add(file);
    }
    if (files.size === 0) return;
    const list = new URL('./loaded-' + process.pid + '.txt', import.meta.url);
    appendFileSync(list, [...files].join('\n') + '\n');
  }
}
`;

const LIST = /^loaded-\d+\.txt$/;
/** As pytest's reporter: enough for any real suite, bounded against a run that loads without end. */
const LOADED_LIMIT = 20_000;
/** Bytes read of one list: 20,000 paths fit many times over; the run itself can write there. */
const LIST_BYTES = 16 * 1024 * 1024;

/**
 * Puts the recorder and the vitest reporter in the run's report directory (read-only in the
 * sandbox), returning their files.
 */
export async function writeNodeLoadedRecorder(reportDirectory: string): Promise<string[]> {
  const files = [
    [path.join(reportDirectory, RECORDER_FILE), RECORDER_SOURCE],
    [path.join(reportDirectory, VITEST_REPORTER_FILE), VITEST_REPORTER_SOURCE],
  ] as const;
  await Promise.all(files.map(([file, source]) => writeFile(file, source)));
  return files.map(([file]) => file);
}

/** The NODE_OPTIONS flag loading the recorder (`--require`, as the harness guard is). */
export function nodeLoadedFlag(reportDirectory: string): string {
  return requireFlag(path.join(reportDirectory, RECORDER_FILE));
}

/** The vitest argument adding the reporter that lists its module graph. */
export function vitestLoadedFlag(reportDirectory: string): string {
  return `--reporter=${path.join(reportDirectory, VITEST_REPORTER_FILE)}`;
}

/**
 * The absolute paths the run's test processes loaded, and the files of the tree their code read
 * (root: the run's directory, real path), or undefined when none recorded any (no node test process
 * ran, or it died before it could write). A file only the tests read (an expected-value file) is
 * not listed: what the tests read is the base's in the trusted runs, whoever changed it.
 */
export async function readNodeLoadedFiles(
  reportDirectory: string,
  root: string,
): Promise<string[] | undefined> {
  const lists = (await readdir(reportDirectory)).filter((name) => LIST.test(name));
  if (lists.length === 0) return undefined;
  const files = new Set<string>();
  for (const name of lists) {
    for (const line of (await listText(path.join(reportDirectory, name))).split('\n')) {
      const [entry = '', reader] = line.split('\t');
      if (reader !== undefined && readByTests(reader, root)) continue;
      const file = entry.startsWith('file:') ? safeFilePath(entry) : entry;
      if (file && path.isAbsolute(file)) files.add(file);
    }
  }
  return [...files].sort().slice(0, LOADED_LIMIT);
}

function readByTests(reader: string, root: string): boolean {
  const relative = path.relative(root, reader);
  if (relative.startsWith('..') || path.isAbsolute(relative)) return false;
  return isTestSideFile(relative.split(path.sep).join('/'));
}

async function listText(file: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.min((await handle.stat()).size, LIST_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.toString('utf8', 0, bytesRead);
  } finally {
    await handle.close();
  }
}

function safeFilePath(url: string): string | undefined {
  try {
    // A query or hash (a cache-busting `?v=2`) names the same file.
    return fileURLToPath(url.replace(/[?#].*$/, ''));
  } catch {
    return undefined;
  }
}
