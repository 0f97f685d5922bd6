import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { TestCommand } from './detect.js';
import { HARNESS_CHANGED } from './harness-case.js';
import { JEST_PROCESS_END_SOURCE } from './jest-process-end.js';
import { MOCHA_PROGRAM } from './runner-programs.js';
import { userViewSource, vitestUserViewSource, type CoachgateAdditions } from './user-view.js';

const NODE_GUARD_FILE = 'coachgate-node-harness-guard.cjs';
const VITEST_SETUP_FILE = 'coachgate-vitest-harness.mjs';
const VITEST_GUARD_REPORTER_FILE = 'coachgate-vitest-harness-reporter.mjs';

/**
 * The harness guards of node's runners share this: `take(label, holder)` records the property
 * descriptors of an assertion library's members before the test file or the code under test is
 * imported, and `replacedSince()` names those replaced since, each told once. What it uses later
 * is taken at start, so replacing `Object.is` or `Error` does not blind it; members are compared
 * by their descriptors, so a getter handing the original back to the check does not either.
 * `harnessChanged(file)` is the failure a root `afterEach` hook throws: the test's own id carries
 * it, so a base test fails in the trusted run as well as in the Player's run (a root `after` hook
 * would name no test).
 */
const TAKE_AND_COMPARE = String.raw`const is = Object.is;
const describe = Object.getOwnPropertyDescriptor;
const ownNames = Object.getOwnPropertyNames;
const Failure = Error;
const taken = [];
const take = (label, holder) => {
  const own = ownNames(holder);
  for (let i = 0; i < own.length; i += 1) {
    const name = own[i];
    if (name === 'prototype') continue;
    taken.push([label + '.' + name, holder, name, describe(holder, name), false]);
  }
};
const intact = (entry) => {
  const now = describe(entry[1], entry[2]) || {};
  const was = entry[3];
  return is(now.value, was.value) && is(now.get, was.get) && is(now.set, was.set);
};
const replacedSince = () => {
  let replaced = '';
  let more = 0;
  for (let i = 0; i < taken.length; i += 1) {
    const entry = taken[i];
    if (entry[4] || intact(entry)) continue;
    entry[4] = true;
    if (replaced.length > 200) more += 1;
    else replaced += (replaced ? ', ' : '') + entry[0];
  }
  return more ? replaced + ' and ' + more + ' more' : replaced;
};
const harnessChanged = (replaced, file) => {
  const failure = new Failure('${HARNESS_CHANGED}: ' + replaced + ' replaced while ' + file +
    ' ran');
  failure.stack = failure.message; // the guard's own frames say nothing
  return failure;
};
const takeNodeAssert = (assert, strict) => {
  take('node:assert', assert);
  take('node:assert/strict', strict);
  if (assert.strict !== strict) take('node:assert.strict', assert.strict);
};`;

/**
 * A module every node process of a run that may start `node --test` or mocha loads first
 * (`--require` through NODE_OPTIONS: on Node 20 an `--import` would send every program's main
 * module through the ES module loader, which refuses a file named `.ts` that node otherwise runs
 * as CommonJS). Armed in node's test children (node sets NODE_TEST_CONTEXT for them) and in
 * mocha's processes (its program is mocha's own file or its `.bin` link); npm and any other node
 * program of the run load it and do nothing. It takes the members of `node:assert`,
 * `node:assert/strict` and `assert.strict` before the test file or the code under test is
 * imported, and after each test fails if one was replaced since, naming it and the test file:
 * through `node:test`'s `afterEach` (Node 20's JUnit reporter mis-nests a root `after` hook's
 * failure), and in mocha as a root `afterEach` hook handed to mocha's own `rootHooks` when it runs
 * (mocha reports it as the hook's failure after that test, and skips the rest). mocha's tests bring
 * their own assertion library besides; chai is left alone, since its plugins overwrite its methods on
 * purpose. The file is read-only in the sandbox: a child cannot rewrite it for the next one.
 */
const NODE_GUARD_SOURCE = String.raw`// coachgate: node:assert must stay as it is while the tests run.
const program = process.argv[1] || '';
const nodeTestChild = (process.env.NODE_TEST_CONTEXT || '').startsWith('child');
if (nodeTestChild || ${MOCHA_PROGRAM}.test(program)) {
  ${TAKE_AND_COMPARE.replaceAll('\n', '\n  ')}
  takeNodeAssert(require('node:assert'), require('node:assert/strict'));
  const { relative } = require('node:path');
  const check = (file) => {
    const replaced = replacedSince();
    if (replaced) throw harnessChanged(replaced, relative(process.cwd(), file || ''));
  };
  if (nodeTestChild) {
    require('node:test').afterEach(() => check(program));
  } else {
    const { createRequire } = require('node:module');
    let Mocha;
    try {
      const exported = createRequire(program)('mocha');
      Mocha = exported.Mocha || exported;
    } catch {
      // not a mocha this guard can reach (an ES-module-only release): the static rules stand alone
    }
    const run = Mocha && Mocha.prototype && Mocha.prototype.run;
    if (typeof run === 'function' && typeof Mocha.prototype.rootHooks === 'function') {
      Mocha.prototype.run = function (...args) {
        this.rootHooks({ afterEach: [function () { check(this.currentTest && this.currentTest.file); }] });
        return run.apply(this, args);
      };
    }
  }
}
`;

/**
 * vitest runs its tests with its own `expect` (chai's `Assertion` with vitest's matchers on it): a
 * setup file of coachgate's, run after the project's own in every test file's context, takes
 * `node:assert`, `expect`'s members and `chai.Assertion.prototype`'s, so a matcher replaced by code
 * under test (reached by a computed import no static rule reads) fails the next test. Matchers the
 * tests add (`expect.extend`) are new names and leave the taken ones alone. A reporter puts the
 * setup file into every project's resolved config (`onInit`): vitest's command line has no flag
 * that adds a setup file beside the configured ones.
 */
const VITEST_SETUP_SOURCE = String.raw`// coachgate: vitest's expect and node:assert must stay as they are.
import { afterEach, chai, expect } from 'vitest';
import { relative } from 'node:path';
import assert from 'node:assert';
import strict from 'node:assert/strict';
${TAKE_AND_COMPARE}
takeNodeAssert(assert, strict);
take('expect', expect);
const Assertion = chai.Assertion;
take('chai.Assertion.prototype', Assertion.prototype);
// chai's plugins (chai-as-promised) overwrite matchers on purpose, through Assertion's own API: a
// call whose stack shows a test file and no other file of the project is the tests' own, and the
// matcher it overwrote is taken again.
const root = process.cwd() + '/';
const testSide = (file) =>
  /(^|\/)(tests?|__tests__|specs?)\//.test(file) || /\.(test|spec)\.[cm]?[jt]sx?$/.test(file);
const calledByTests = () => {
  const limit = Failure.stackTraceLimit;
  Failure.stackTraceLimit = 64;
  const stack = String(new Failure().stack);
  Failure.stackTraceLimit = limit;
  let tests = false;
  for (const [, file] of stack.matchAll(/(?:file:\/\/)?(\/[^\s()]+?):\d+:\d+/g)) {
    if (!file.startsWith(root) || file.includes('/node_modules/')) continue;
    if (!testSide(file.slice(root.length))) return false;
    tests = true;
  }
  return tests;
};
for (const api of ['addMethod', 'addProperty', 'addChainableMethod', 'overwriteMethod',
  'overwriteProperty', 'overwriteChainableMethod']) {
  const original = Assertion[api];
  if (typeof original !== 'function') continue;
  Assertion[api] = function (name, ...rest) {
    // Only a matcher nobody else replaced first: a patch made before the tests' plugin still shows.
    const entry = taken.find((item) => item[1] === Assertion.prototype && item[2] === name);
    const untouched = entry && intact(entry);
    const result = original.call(this, name, ...rest);
    if (untouched && calledByTests()) entry[3] = describe(Assertion.prototype, name);
    return result;
  };
}
afterEach(() => {
  const replaced = replacedSince();
  if (replaced) throw harnessChanged(replaced, relative(process.cwd(), expect.getState().testPath));
});
`;

/** Puts the setup file into every project's config; a browser project cannot load `node:assert`. */
const VITEST_GUARD_REPORTER_SOURCE = String.raw`// coachgate: adds its harness setup file to vitest.
import { fileURLToPath } from 'node:url';
const setup = fileURLToPath(new URL('./${VITEST_SETUP_FILE}', import.meta.url));
export default class CoachgateHarnessGuard {
  onInit(vitest) {
    for (const project of vitest.projects || []) {
      const config = project.config || {};
      if (config.browser?.enabled || !Array.isArray(config.setupFiles)) continue;
      if (!config.setupFiles.includes(setup)) config.setupFiles.push(setup);
    }
  }
}
`;

/** Runs that can start `node --test`: directly, or through a package script or a shell command. */
export function mayRunNodeTest(command: TestCommand): boolean {
  return ['node-test', 'npm', 'custom'].includes(command.runner);
}

/** Runs that can start vitest: directly, or through a package script or a shell command. */
export function mayRunVitest(command: TestCommand): boolean {
  return ['vitest', 'npm', 'custom'].includes(command.runner);
}

/**
 * Puts the guards the command may need in the run's report directory, where the NODE_OPTIONS flag
 * and vitest's reporter flag name them; returns the files written. The node guard is the first
 * module every node process of the run loads, so it also hides coachgate's additions from the tests.
 */
export async function writeHarnessGuards(
  command: TestCommand,
  reportDirectory: string,
  /** What the guard, loaded first, takes back out of the tests' sight (src/runner/user-view.ts). */
  added: CoachgateAdditions = {},
  /** Watches vitest's setup file runs before the guard takes the matchers it replaces. */
  vitestWatches = '',
): Promise<string[]> {
  const files: [string, string][] = [];
  if (mayRunNodeTest(command))
    files.push([
      NODE_GUARD_FILE,
      userViewSource(added) + NODE_GUARD_SOURCE + JEST_PROCESS_END_SOURCE,
    ]);
  if (mayRunVitest(command))
    files.push(
      [VITEST_SETUP_FILE, vitestUserViewSource(added) + vitestWatches + VITEST_SETUP_SOURCE],
      [VITEST_GUARD_REPORTER_FILE, VITEST_GUARD_REPORTER_SOURCE],
    );
  const paths = files.map(([name]) => path.join(reportDirectory, name));
  await Promise.all(files.map(([, source], index) => writeFile(paths[index]!, source)));
  return paths;
}

/** The NODE_OPTIONS flag loading the guard. */
export function nodeHarnessGuardFlag(reportDirectory: string): string {
  return requireFlag(path.join(reportDirectory, NODE_GUARD_FILE));
}

/** `--require` of `file` for NODE_OPTIONS, which splits on spaces outside double quotes. */
export function requireFlag(file: string): string {
  return `--require="${file.replace(/["\\]/g, '\\$&')}"`;
}

/** The vitest argument adding the reporter that adds the guard's setup file. */
export function vitestHarnessGuardFlag(reportDirectory: string): string {
  return `--reporter=${path.join(reportDirectory, VITEST_GUARD_REPORTER_FILE)}`;
}
