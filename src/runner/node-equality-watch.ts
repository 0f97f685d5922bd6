import { readFile } from 'node:fs/promises';
import { changedLines } from '../scope/changed-lines.js';

/** What the node equality watch reads: the changed files and the lines the Player wrote. */
export interface NodeEqualityConfig {
  /** Absolute real paths of the changed product files. */
  files: string[];
  /** Per file, the 1-based lines the change wrote; absent: every line (a new file). */
  changed: Record<string, number[]>;
}

/**
 * The equality watch's request, from a trusted run's observe request: each changed JavaScript file
 * with the lines its change wrote (from its text at the base, `bases`). undefined when none is JS.
 */
export async function nodeEqualityConfig(
  files: readonly string[],
  bases: Readonly<Record<string, string>> = {},
): Promise<NodeEqualityConfig | undefined> {
  const scripts = files.filter((file) => /\.[cm]?js$/.test(file));
  if (scripts.length === 0) return undefined;
  const changed: NodeEqualityConfig['changed'] = {};
  for (const file of scripts) {
    const now = await readFile(file, 'utf8').catch(() => undefined);
    const lines = now === undefined ? undefined : changedLines(bases[file], now);
    if (lines) changed[file] = lines;
  }
  return { files: scripts, changed };
}

/**
 * JavaScript for coachgate's node watch (src/runner/node-watch.ts), armed in a trusted run's test
 * processes (node --test children, mocha): equality judged by its effect, as pytest's and
 * unittest's are (src/runner/equality-watch.ts). `node:assert`'s comparisons that a type can
 * decide (`equal`: `==`, so `valueOf`, `Symbol.toPrimitive`, `toString`; `deepEqual` and
 * `deepStrictEqual`, which see only enumerable own properties, read through getters) are wrapped
 * before the harness guard takes them, keeping their names and identities (`assert.strict` and
 * `node:assert/strict` share them). When one passes and an operand holds an object whose code (its
 * class, a method or accessor of its prototype chain, an own function) sits on lines of a changed
 * file the Player wrote (found by its source text), both operands are compared again as plain
 * data: primitives, boxed values and dates by the builtins' own methods, arrays, maps and sets by
 * their entries, other objects by every own data property and private field (read through the
 * inspector, which sees `#fields`), with no method of the object called. A comparison that then
 * fails is told with the test, the type, its file and where the comparison was made. `strictEqual`
 * compares identities and primitives: no type decides it. A failing comparison is untouched but for
 * the watch's frame in its stack. chai, when the project has it, is watched the same way, on the
 * instance its tests import (loaded first, through `require`, which node 20.19 and later serve for
 * an ES module too): its deep equality (`eql`, which `deep.equal` and `assert.deepEqual` reach,
 * through chai's own `overwriteMethod`) and `assert.equal` (`==`); and each matcher added or
 * overwritten through `Assertion`'s API from a changed product file is told with that file and
 * line (a plugin registered from a test file or a package is the tests' own). A plugin that calls
 * chai's `util` functions on the prototype directly is not seen registering.
 * In scope: `tell`, `currentTest`, `projectSite`, `describeAs`.
 */
export const NODE_EQUALITY_SOURCE = String.raw`const watchEquality = (config) => {
  const fs = require('node:fs');
  const types = require('node:util').types;
  const EQUALITY_LIMIT = 50;
  const NODE_LIMIT = 2000;
  const files = config.files;
  const changed = new Map(files.map((file) => [file, config.changed[file] && new Set(config.changed[file])]));
  const texts = new Map();
  const textOf = (file) => {
    if (!texts.has(file)) {
      try {
        texts.set(file, fs.readFileSync(file, 'utf8'));
      } catch {
        texts.set(file, '');
      }
    }
    return texts.get(file);
  };
  const source = Function.prototype.toString;
  const getProto = Object.getPrototypeOf;
  const describe = Object.getOwnPropertyDescriptor;
  const ownKeys = Reflect.ownKeys;
  const intrinsic = new Set([null, Object.prototype, Function.prototype, Array.prototype,
    Map.prototype, Set.prototype, Date.prototype, RegExp.prototype, Error.prototype,
    Number.prototype, String.prototype, Boolean.prototype, Promise.prototype]);
  // Where a function's source text sits on lines the Player wrote: that file, else null.
  const owners = new WeakMap();
  const ownerOf = (fn) => {
    if (owners.has(fn)) return owners.get(fn);
    let owner = null;
    let text = '';
    try {
      text = source.call(fn);
    } catch {
      text = '';
    }
    if (text && !/\{\s*\[native code\]\s*\}$/.test(text)) {
      const span = text.split('\n').length - 1;
      for (const file of files) {
        const whole = textOf(file);
        const lines = changed.get(file);
        for (let at = whole.indexOf(text); at >= 0 && !owner; at = whole.indexOf(text, at + 1)) {
          const first = whole.slice(0, at).split('\n').length;
          for (let line = first; line <= first + span && !owner; line += 1)
            if (!lines || lines.has(line)) owner = file;
        }
        if (owner) break;
      }
    }
    owners.set(fn, owner);
    return owner;
  };
  // The Player's code deciding how value compares: its type's name and file, or undefined.
  const playersType = (value) => {
    for (let holder = value; !intrinsic.has(holder); holder = getProto(holder)) {
      for (const key of ownKeys(holder)) {
        const found = describe(holder, key) || {};
        for (const fn of [found.value, found.get, found.set]) {
          const file = typeof fn === 'function' && ownerOf(fn);
          if (file) {
            const made = describe(holder, 'constructor');
            const named = made && typeof made.value === 'function' && made.value.name;
            return { type: named || 'Object', file };
          }
        }
      }
    }
    return undefined;
  };
  const OPAQUE = {};
  let session;
  // An object's private fields (#name), through an in-process inspector session (it answers at
  // once); values come back to this side by a function the inspector calls on them.
  const privateFields = (object) => {
    const probe = '__coachgate_probe';
    const fields = [];
    try {
      if (!session) {
        session = new (require('node:inspector').Session)();
        session.connect();
      }
      let id;
      globalThis[probe] = object;
      session.post('Runtime.evaluate', { expression: 'globalThis.' + probe }, (error, answer) => {
        id = answer && answer.result.objectId;
      });
      let found = [];
      if (id)
        session.post('Runtime.getProperties', { objectId: id, ownProperties: true }, (error, answer) => {
          found = (answer && answer.privateProperties) || [];
        });
      for (const field of found) {
        const remote = field.value;
        if (!remote) continue;
        if (remote.objectId) {
          session.post('Runtime.callFunctionOn', { objectId: remote.objectId,
            functionDeclaration: 'function () { globalThis.' + probe + ' = this; }' });
          fields.push([field.name, globalThis[probe]]);
        } else if ('unserializableValue' in remote) {
          const shown = remote.unserializableValue;
          fields.push([field.name, shown.endsWith('n') ? BigInt(shown.slice(0, -1)) : Number(shown)]);
        } else fields.push([field.name, remote.value]);
      }
      if (id) session.post('Runtime.releaseObject', { objectId: id });
    } catch {
      throw OPAQUE;
    } finally {
      delete globalThis[probe];
    }
    return fields;
  };
  // value as plain data, noting in found the first type of the Player's it meets.
  const plain = (value, found, depth) => {
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value;
    if (typeof value === 'function') return value; // compared by identity, as the runners do
    if ((found.budget -= 1) < 0 || depth > 8 || types.isProxy(value)) throw OPAQUE;
    const decider = playersType(value);
    if (decider && !found.decider) found.decider = decider;
    if (types.isBoxedPrimitive(value)) {
      for (const kind of [Number, String, Boolean, BigInt, Symbol])
        try {
          return { boxed: kind.prototype.valueOf.call(value) };
        } catch {
          // not this kind
        }
    }
    if (types.isDate(value)) return { date: Date.prototype.getTime.call(value) };
    if (types.isMap(value) || types.isSet(value)) {
      const entries = [...(types.isMap(value) ? Map : Set).prototype.entries.call(value)];
      // In an order of their own: node and chai compare maps and sets whatever their order.
      const plainEntries = entries.map((entry) => plain(entry, found, depth + 1));
      const keyed = plainEntries.map((entry) => [shownPlain(entry), entry]);
      keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
      return { entries: keyed.map((pair) => pair[1]) };
    }
    const fields = Array.isArray(value) ? [] : {};
    for (const key of ownKeys(value)) {
      const own = describe(value, key);
      if (own && 'value' in own && !(Array.isArray(value) && key === 'length'))
        fields[typeof key === 'symbol' ? String(key) : key] = plain(own.value, found, depth + 1);
    }
    if (decider)
      for (const [name, field] of privateFields(value)) fields[name] = plain(field, found, depth + 1);
    return fields;
  };
  const same = (left, right, loose) => {
    if (left === right || (left !== left && right !== right)) return true;
    const leftObject = left !== null && typeof left === 'object';
    const rightObject = right !== null && typeof right === 'object';
    if (!leftObject && !rightObject) return loose && left == right;
    if (!leftObject || !rightObject || Array.isArray(left) !== Array.isArray(right)) return false;
    const keys = Object.keys(left);
    return keys.length === Object.keys(right).length &&
      keys.every((key) => key in right && same(left[key], right[key], loose));
  };
  // A one-field object compared loosely with a primitive stands for its field (a Money(5) == 5);
  // with more fields no plain form says what it stands for, and the comparison stays the type's.
  const standsFor = (value, other) => {
    if (value === null || typeof value !== 'object' || (other !== null && typeof other === 'object'))
      return value;
    const keys = Object.keys(value);
    if (keys.length !== 1) throw OPAQUE;
    return value[keys[0]];
  };
  let count = 0;
  const check = (name, loose, left, right, callee) => {
    const primitive = name === 'equal';
    if (left === right || count >= EQUALITY_LIMIT) return;
    const found = { budget: NODE_LIMIT };
    let plainLeft;
    let plainRight;
    try {
      plainLeft = plain(left, found, 0);
      plainRight = plain(right, found, 0);
      if (!found.decider) return;
      if (primitive)
        [plainLeft, plainRight] = [standsFor(plainLeft, plainRight), standsFor(plainRight, plainLeft)];
      if (same(plainLeft, plainRight, loose)) return;
    } catch {
      return; // no plain form: the comparison stays the type's
    }
    count += 1;
    const site = projectSite(callee) || { file: '?', line: 0 };
    tell({ event: 'equality', nodeid: currentTest() || site.file, op: name, type: found.decider.type,
      type_file: path.relative(root, found.decider.file), file: site.file, line: site.line,
      left: shownPlain(plainLeft), right: shownPlain(plainRight) });
  };
  const shownPlain = (value) => {
    let text;
    try {
      text = require('node:util').inspect(value, { depth: 4, breakLength: Infinity });
    } catch {
      text = '<unreadable>';
    }
    return text.length <= 300 ? text : text.slice(0, 300) + '...';
  };
  const own = __filename;
  // The watch's frame leaves a failure's stack: the runner shows what it would without it.
  const withoutOwnFrame = (error) => {
    try {
      if (error && typeof error.stack === 'string')
        error.stack = error.stack.split('\n').filter((line) => !line.includes(own)).join('\n');
    } catch {
      // a frozen error keeps its stack
    }
    return error;
  };
  const watched = (name, loose, original) => {
    const comparing = function (actual, expected) {
      try {
        original.apply(this, arguments);
      } catch (error) {
        throw withoutOwnFrame(error);
      }
      check(name, loose, actual, expected, comparing);
    };
    return describeAs(comparing, original);
  };
  const assert = require('node:assert');
  const strict = assert.strict;
  const deepStrict = watched('deepStrictEqual', false, assert.deepStrictEqual);
  assert.equal = watched('equal', true, assert.equal);
  assert.deepEqual = watched('deepEqual', true, assert.deepEqual);
  assert.deepStrictEqual = deepStrict;
  strict.deepEqual = deepStrict;
  strict.deepStrictEqual = deepStrict;
  require('node:module').syncBuiltinESMExports();
  let chai;
  try {
    // The project's own chai, the instance its tests import (node shares ES modules with require).
    chai = require(require.resolve('chai', { paths: [process.cwd()] }));
  } catch {
    chai = undefined; // no chai, or a node that cannot require an ES module
  }
  if (chai && chai.Assertion && chai.util) {
    const { Assertion, util } = chai;
    for (const name of ['eql', 'eqls'])
      Assertion.overwriteMethod(name, (inner) => function comparing(expected) {
        const result = inner.apply(this, arguments);
        if (!util.flag(this, 'negate')) check(name, false, util.flag(this, 'object'), expected, comparing);
        return result;
      });
    if (chai.assert && typeof chai.assert.equal === 'function')
      chai.assert.equal = watched('equal', true, chai.assert.equal);
    // A matcher added or overwritten from a changed product file: the code under test rewrote the
    // assertions that judge it (the tests' own plugins register from test files and packages).
    const changedFiles = new Set(files);
    for (const api of ['addMethod', 'overwriteMethod', 'addProperty', 'overwriteProperty',
      'addChainableMethod', 'overwriteChainableMethod']) {
      const original = Assertion[api];
      if (typeof original !== 'function') continue;
      const registering = function (name) {
        const site = projectSite(registering);
        if (site && changedFiles.has(site.path))
          tell({ event: 'matcher', api: 'chai.Assertion.' + api, name: String(name),
            file: site.file, line: site.line, nodeid: currentTest() || null });
        return original.apply(this, arguments);
      };
      Assertion[api] = describeAs(registering, original);
    }
  }
};
`;
