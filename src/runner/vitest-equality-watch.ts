import { equalityByTypeMessage } from './harness-case.js';
import { NODE_CALLS_RECORDER_FILE } from './node-call-recorder.js';

/**
 * Equality by effect under vitest, part of coachgate's vitest setup file (src/runner/harness-guard.ts),
 * armed where the trusted run records the tests' calls (src/runner/node-call-recorder.ts, the same
 * fork's module, reached through `require`: it knows which objects a call into a changed module
 * returned to the tests). vitest's `toEqual`, `toStrictEqual` and `toMatchObject` let an operand
 * decide: its `asymmetricMatch`, an equality tester, a getter read once. After one of them passes,
 * when an operand holds an object a changed module returned, or an equality tester is in force that
 * the tests did not add through `expect.addEqualityTesters`, both operands are read again as plain
 * data (own enumerable fields, each read once; arrays, dates, maps and sets by their contents; a
 * function by identity; vitest's own asymmetric matchers the tests wrote match anything) and
 * compared. When that comparison fails (and no tester the tests added decides the two operands), the
 * test fails, naming the comparison, the type and the file of the function that made it. `toBe` needs no watch: it is `Object.is`, which no operand
 * decides. The matchers are replaced before the harness guard takes them, through chai's own
 * `overwriteMethod`.
 */
export const VITEST_EQUALITY_SOURCE = String.raw`// coachgate: a passing equality decided by the code under test is compared again as plain data.
import { createRequire as $cgRequire } from 'node:module';
import { dirname as $cgDirname, relative as $cgRelative } from 'node:path';
import { fileURLToPath as $cgPath } from 'node:url';
{
  let recorder;
  try {
    recorder = $cgRequire(import.meta.url)('./${NODE_CALLS_RECORDER_FILE}');
  } catch {
    recorder = undefined;
  }
  const madeBy = recorder && recorder.madeBy;
  if (typeof madeBy === 'function') {
    const root = process.cwd();
    const ours = $cgDirname($cgPath(import.meta.url)) + '/';
    const MATCHER = Object.getPrototypeOf(Object.getPrototypeOf(expect.any(Number)));
    const WILDCARD = Symbol('any');
    const matchers = () => globalThis[Symbol.for('$$jest-matchers-object')] || {};
    // Testers the tests added (or the project's setup files, before this one): the others decide.
    const known = new WeakSet(matchers().customEqualityTesters || []);
    const frames = (callee) => {
      const holder = {};
      const limit = Error.stackTraceLimit;
      Error.stackTraceLimit = 64;
      Error.captureStackTrace(holder, callee);
      Error.stackTraceLimit = limit;
      return [...String(holder.stack).matchAll(/(?:file:\/\/)?(\/[^\s()]+?):(\d+):\d+\)?$/gm)]
        .map(([, file, line]) => ({ file, line: Number(line) }))
        .filter(({ file }) => file.startsWith(root + '/') && !file.includes('/node_modules/'))
        .filter(({ file }) => !file.startsWith(ours));
    };
    const add = expect.addEqualityTesters;
    expect.addEqualityTesters = function addEqualityTesters(testers) {
      const by = frames(addEqualityTesters)[0];
      if (by && !recorder.changed(by.file) && Array.isArray(testers))
        for (const tester of testers) if (typeof tester === 'function') known.add(tester);
      return add.apply(this, arguments);
    };
    const testers = () => matchers().customEqualityTesters || [];
    const foreignTester = () => testers().some((tester) => !known.has(tester));
    // A tester of the tests' that decides these operands: the comparison is theirs.
    const decidedByTests = (actual, expected) =>
      testers().some((tester) => {
        try {
          return known.has(tester) && tester.call({ equals: () => false }, actual, expected, []) !== undefined;
        } catch {
          return false;
        }
      });
    const GIVE_UP = new Error('not judged');
    // The operand as plain data, and the first object in it a changed module made.
    const plain = (value, found) => {
      let budget = 2000;
      const convert = (item, depth) => {
        if (item === null || (typeof item !== 'object' && typeof item !== 'function')) return item;
        if (typeof item === 'function') return item;
        budget -= 1;
        if (depth > 12 || budget < 0) throw GIVE_UP;
        const origin = madeBy(item);
        if (origin && !found.origin) found.origin = { ...origin, type: item.constructor?.name };
        if (!origin && MATCHER.isPrototypeOf(item)) return WILDCARD;
        if (Array.isArray(item)) return item.map((each) => convert(each, depth + 1));
        if (item instanceof Date) return { date: item.getTime() };
        if (item instanceof RegExp) return { regexp: String(item) };
        const sorted = (entries) => entries.sort((a, b) => (String(a[0]) < String(b[0]) ? -1 : 1));
        if (item instanceof Map)
          return { map: sorted([...item].map(([k, v]) => [convert(k, depth + 1), convert(v, depth + 1)])) };
        if (item instanceof Set)
          return { set: sorted([...item].map((each) => [JSON.stringify(convert(each, depth + 1)) ?? String(each)])) };
        const copy = {};
        for (const key of Object.keys(item)) {
          const field = convert(item[key], depth + 1);
          if (field !== undefined) copy[key] = field;
        }
        return copy;
      };
      return convert(value, 0);
    };
    const same = (a, b, subset) => {
      if (a === WILDCARD || b === WILDCARD || Object.is(a, b)) return true;
      if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
      if (Array.isArray(a) !== Array.isArray(b)) return false;
      if (Array.isArray(a))
        return a.length === b.length && a.every((each, index) => same(each, b[index], subset));
      const keys = subset ? Object.keys(b) : [...new Set([...Object.keys(a), ...Object.keys(b)])];
      return keys.every((key) => same(a[key], b[key], subset));
    };
    const shown = (value) => {
      const text = JSON.stringify(value, (_, item) =>
        item === WILDCARD ? '(any)' : typeof item === 'function' ? '(function)' : item) ?? String(value);
      return text.length > 200 ? text.slice(0, 200) + '…' : text;
    };
    const judge = (name, actual, expected, callee) => {
      const found = {};
      let left;
      let right;
      try {
        left = plain(actual, found);
        right = plain(expected, found);
      } catch {
        return;
      }
      const tester = !found.origin && foreignTester();
      if (!found.origin && !tester) return;
      if (same(left, right, name === 'toMatchObject') || decidedByTests(actual, expected)) return;
      const state = expect.getState();
      const at = frames(callee).find((frame) => !recorder.changed(frame.file)) || {};
      const origin = found.origin || { type: 'an equality tester', file: '' };
      const message = ${equalityTemplate()};
      throw new Error(message);
    };
    for (const name of ['toEqual', 'toStrictEqual', 'toMatchObject']) {
      chai.util.overwriteMethod(chai.Assertion.prototype, name, (original) =>
        function (expected) {
          const result = original.apply(this, arguments);
          const flag = (key) => chai.util.flag(this, key);
          if (!flag('negate') && !flag('promise')) judge(name, flag('object'), expected, judge);
          return result;
        });
    }
  }
}
`;

/** The words of the finding, as a JavaScript template over judge()'s variables. */
function equalityTemplate(): string {
  const slot = (expression: string) => `\${${expression}}`;
  const words = equalityByTypeMessage({
    nodeid: slot("$cgRelative(root, state.testPath || '') + ' > ' + state.currentTestName"),
    op: slot('name'),
    type: slot("origin.type || 'an object'"),
    type_file: slot(
      "origin.file ? $cgRelative(root, origin.file) + ', returned by ' + origin.function : 'not added by the tests'",
    ),
    file: slot("at.file ? $cgRelative(root, at.file) : '?'"),
    line: slot("at.line ?? '?'"),
    left: slot('shown(left)'),
    right: slot('shown(right)'),
  });
  return '`' + words.replaceAll('`', '\\`') + '`';
}
