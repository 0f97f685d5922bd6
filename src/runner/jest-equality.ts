/**
 * Equality judged by its effect under jest, in a trusted run (the jest part of the node call
 * recorder, src/runner/jest-calls.ts, defines `watchEquality(context, scope)` with it). jest's
 * `expect` keeps its matchers in the state it holds on the test file's context
 * (`Symbol.for('$$jest-matchers-object')`) and builds each `expect(x)` from them: `toEqual`,
 * `toStrictEqual` and `toMatchObject` are wrapped there, so a comparison that passed is compared
 * again as plain data: each object as its own enumerable fields (a getter read again), a number,
 * string, boolean or date object as the builtin value it holds (read with the builtin's own
 * method, not its `valueOf`), arrays by index. What the tests bring keeps deciding: `expect`'s own
 * asymmetric matchers (`expect.any`, `objectContaining`, `expect.extend`'s), and an
 * `asymmetricMatch` or a custom equality tester whose code is the tests' (found in the code jest
 * compiled from a base test file of this context). Anything else that decided (an
 * `asymmetricMatch` of the product, a tester the product registered however it reached the list, a
 * `valueOf` or `Symbol.toPrimitive`, a getter answering another way) no longer does: when the plain
 * comparison fails, the matcher fails the test naming the type and both plain values, and the
 * trusted run's verdict refuses it. Maps, sets, typed arrays and other builtins are left to jest's
 * own equality with the tests' testers. `toBe` is `Object.is`, which no type can sway.
 */
export const JEST_EQUALITY_SOURCE = String.raw`// coachgate: jest's equality, judged again as data.
const ASYMMETRIC = Symbol.for('jest.asymmetricMatcher');
const watchedStates = new WeakSet();
const sourceOf = Function.prototype.toString;
const tag = Object.prototype.toString;
const brand = (method, value) => {
  try {
    method.call(value);
    return true;
  } catch {
    return false;
  }
};
// The builtin value a wrapper or date object holds, read with the builtin's own method.
const held = (value) => {
  for (const [method, label] of [[Number.prototype.valueOf, 'number'],
    [String.prototype.valueOf, 'string'], [Boolean.prototype.valueOf, 'boolean'],
    [Date.prototype.getTime, 'date']])
    if (brand(method, value)) return { value: method.call(value), label };
  return undefined;
};
const walkable = (value) => Array.isArray(value) ||
  (tag.call(value) === '[object Object]' && !brand(Map.prototype.has, value) &&
    !brand(Set.prototype.has, value) && !ArrayBuffer.isView(value));
const typeName = (value) => {
  if (value === null || typeof value !== 'object') return typeof value;
  try {
    const proto = Object.getPrototypeOf(value);
    return (proto && proto.constructor && proto.constructor.name) || 'Object';
  } catch {
    return 'Object';
  }
};
const shownData = (value) => {
  try {
    const text = JSON.stringify(value, (key, item) =>
      item !== null && typeof item === 'object' && held(item) ? held(item).value : item);
    if (text === undefined) return String(value);
    return text.length > 120 ? text.slice(0, 117) + '...' : text;
  } catch {
    return typeName(value);
  }
};
const fieldsOf = (value, strict) => {
  const fields = {};
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (strict || item !== undefined) fields[key] = item;
  }
  return fields;
};
const watchEquality = (context, scope) => {
  const state = context[EXPECT_STATE];
  if (!state || !state.matchers || watchedStates.has(state)) return;
  watchedStates.add(state);
  const tests = (fn) => {
    const text = sourceOf.call(fn);
    return scope.testCode.some((code) => code.includes(text));
  };
  const own = (() => {
    try {
      const sample = context.expect && context.expect.any(Number);
      return sample && Object.getPrototypeOf(Object.getPrototypeOf(sample));
    } catch {
      return undefined;
    }
  })();
  const theTests = (value) =>
    value !== null && typeof value === 'object' && typeof value.asymmetricMatch === 'function' &&
    (own
      ? own.isPrototypeOf(value)
      : value.$$typeof === ASYMMETRIC || tests(value.asymmetricMatch));
  const judge = (matcher, received, expected, mode) => {
    const testers = (matcher.customTesters || []).filter(tests);
    const testerContext = { equals: matcher.equals };
    const at = [];
    const miss = (left, right, depth) => ({ left, right, at: at.slice(0, depth).join('') });
    const compare = (a, b, depth) => {
      if (depth > 16) return undefined;
      if (theTests(b)) return b.asymmetricMatch(a) ? undefined : miss(a, b, depth);
      if (theTests(a)) return a.asymmetricMatch(b) ? undefined : miss(a, b, depth);
      for (const tester of testers) {
        const answer = tester.call(testerContext, a, b, testers);
        if (answer !== undefined) return answer ? undefined : miss(a, b, depth);
      }
      const objectA = a !== null && typeof a === 'object';
      const objectB = b !== null && typeof b === 'object';
      const heldA = objectA && held(a);
      const heldB = objectB && held(b);
      if (heldA || heldB)
        return heldA && heldB && heldA.label === heldB.label && Object.is(heldA.value, heldB.value)
          ? undefined : miss(a, b, depth);
      if (!objectA || !objectB) return Object.is(a, b) ? undefined : miss(a, b, depth);
      if (!walkable(a) || !walkable(b))
        return matcher.equals(a, b, testers) ? undefined : miss(a, b, depth);
      if (Array.isArray(a) !== Array.isArray(b)) return miss(a, b, depth);
      if (Array.isArray(a)) {
        if (a.length !== b.length) return miss(a, b, depth);
        for (let index = 0; index < a.length; index += 1) {
          at[depth] = '[' + index + ']';
          const found = compare(a[index], b[index], depth + 1);
          if (found) return found;
        }
        return undefined;
      }
      const fieldsA = fieldsOf(a, mode === 'strict');
      const fieldsB = fieldsOf(b, mode === 'strict');
      const keysA = Object.keys(fieldsA);
      const keysB = Object.keys(fieldsB);
      if (mode !== 'subset' && keysA.length !== keysB.length) return miss(a, b, depth);
      for (const key of keysB) {
        if (!(key in fieldsA)) return miss(a, b, depth);
        at[depth] = '.' + key;
        const found = compare(fieldsA[key], fieldsB[key], depth + 1);
        if (found) return found;
      }
      return undefined;
    };
    return compare(received, expected, 0);
  };
  const modes = { toEqual: 'loose', toStrictEqual: 'strict', toMatchObject: 'subset' };
  for (const [name, mode] of Object.entries(modes)) {
    const original = state.matchers[name];
    if (typeof original !== 'function') continue;
    const judged = function (received, expected) {
      const result = original.apply(this, arguments);
      if (!this || this.isNot || !result || result.pass !== true) return result;
      let found;
      try {
        found = judge(this, received, expected, mode);
      } catch {
        found = undefined; // a value that cannot be read as data is left to its own equality
      }
      if (!found) return result;
      const type = [found.left, found.right, received, expected].map(typeName)
        .find((each) => !['Object', 'Array', 'number', 'string', 'boolean', 'undefined',
          'object'].includes(each)) || typeName(received);
      const message = 'coachgate: ' + name + ' passed only by the behaviour of ' + type +
        ' (its own equality, asymmetricMatch, valueOf or getters): compared again as plain ' +
        'data, ' + (found.at ? 'at ' + found.at + ' ' : '') + shownData(found.left) + ' vs ' +
        shownData(found.right) +
        '. A type must compare the values it holds.';
      return { pass: false, message: () => message };
    };
    for (const key of Reflect.ownKeys(original))
      if (key !== 'prototype')
        Object.defineProperty(judged, key, Object.getOwnPropertyDescriptor(original, key));
    state.matchers[name] = judged;
  }
};`;
