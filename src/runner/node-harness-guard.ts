import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TestCommand } from './detect.js';
import { HARNESS_CHANGED } from './report/pytest-jsonl.js';

/**
 * A module every `node --test` child loads before its test file (`--import` through NODE_OPTIONS):
 * it takes the members of `node:assert`, `node:assert/strict` and `assert.strict` before the test
 * file or the code under test is imported, and after each test (a root `afterEach` hook) fails that
 * test if one was replaced since, naming it and the test file; each replacement is told once. The
 * test's own id carries it, so a base test fails in the trusted run as well as in the Player's run.
 * (A root `after` hook would name no test, and Node 20's JUnit reporter mis-nests its failure.)
 * Only test children arm it (node sets NODE_TEST_CONTEXT for them): npm, the orchestrating
 * `node --test` and any other node program of the run load it and do nothing. What it uses later
 * is taken at start, so replacing `Object.is` or `Error` does not blind it; members are compared
 * by their property descriptors, so a getter handing the original back to the check does not
 * either. The file is read-only in the sandbox: a child cannot rewrite it for the next one.
 */
const GUARD_SOURCE = String.raw`// coachgate: node:assert must stay as it is while the tests run.
if ((process.env.NODE_TEST_CONTEXT || '').startsWith('child')) {
  const { default: assert } = await import('node:assert');
  const { default: strict } = await import('node:assert/strict');
  const { afterEach } = await import('node:test');
  const { relative } = await import('node:path');
  const is = Object.is;
  const describe = Object.getOwnPropertyDescriptor;
  const Failure = Error;
  const file = relative(process.cwd(), process.argv[1] || '');
  const taken = [];
  const take = (label, holder) => {
    const own = Object.getOwnPropertyNames(holder);
    for (let i = 0; i < own.length; i += 1) {
      const name = own[i];
      if (name === 'prototype') continue;
      taken.push([label + '.' + name, holder, name, describe(holder, name), false]);
    }
  };
  take('node:assert', assert);
  take('node:assert/strict', strict);
  if (assert.strict !== strict) take('node:assert.strict', assert.strict);
  afterEach(() => {
    let replaced = '';
    for (let i = 0; i < taken.length; i += 1) {
      const entry = taken[i];
      const now = describe(entry[1], entry[2]) || {};
      const was = entry[3];
      if (entry[4] || (is(now.value, was.value) && is(now.get, was.get) && is(now.set, was.set)))
        continue;
      entry[4] = true;
      replaced += (replaced ? ', ' : '') + entry[0];
    }
    if (!replaced) return;
    const failure = new Failure('${HARNESS_CHANGED}: ' + replaced + ' replaced while ' + file +
      ' ran');
    failure.stack = failure.message; // the guard's own frames say nothing
    throw failure;
  });
}
`;

export const NODE_HARNESS_GUARD_FILE = 'coachgate-node-harness-guard.mjs';

/** Runs that can start `node --test`: directly, or through a package script or a shell command. */
export function mayRunNodeTest(command: TestCommand): boolean {
  return ['node-test', 'npm', 'custom'].includes(command.runner);
}

/** Puts the guard in the run's report directory, where the NODE_OPTIONS flag names it. */
export async function writeNodeHarnessGuard(reportDirectory: string): Promise<string> {
  const file = path.join(reportDirectory, NODE_HARNESS_GUARD_FILE);
  await writeFile(file, GUARD_SOURCE);
  return file;
}

/** The NODE_OPTIONS flag loading the guard (a file: URL: NODE_OPTIONS splits on spaces). */
export function nodeHarnessGuardFlag(reportDirectory: string): string {
  return `--import=${pathToFileURL(path.join(reportDirectory, NODE_HARNESS_GUARD_FILE)).href}`;
}
