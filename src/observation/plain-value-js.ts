/**
 * JavaScript shared by the node call recorder (src/runner/node-call-recorder.ts) and the node
 * replay (src/observation/node-replay-script.ts): `plainText(value)` is a value's canonical JSON
 * (object keys sorted) when it is made of plain values only (finite numbers, strings, booleans,
 * null, arrays and plain objects of those, whose fields are data: a getter is not read, reading it
 * could change what the tests see next), within the size bounds; `undefined` otherwise. A
 * function's `undefined` result is the text `undefined`. Both sides compare these texts. Arrays and
 * objects of any realm count (jest runs each test file in a context of its own, with its own
 * `Object.prototype`): a prototype is plain when it is a realm's own `Object.prototype` or
 * `Array.prototype`, which no class instance has.
 */
export const PLAIN_VALUE_SOURCE = String.raw`const VALUE_LIMIT = 2000;
const ITEM_LIMIT = 500;
const objectPrototype = (proto) =>
  proto !== null && typeof proto === 'object' && Object.getPrototypeOf(proto) === null &&
  typeof proto.constructor === 'function' && proto.constructor.prototype === proto &&
  proto.constructor.name === 'Object';
const arrayPrototype = (proto) =>
  Array.isArray(proto) && proto.length === 0 && objectPrototype(Object.getPrototypeOf(proto));
const plainText = (value) => {
  if (value === undefined) return 'undefined';
  let budget = ITEM_LIMIT;
  const canonical = (item, depth) => {
    if (item === null || typeof item === 'string' || typeof item === 'boolean') return item;
    if (typeof item === 'number') return Number.isFinite(item) ? item : undefined;
    if (typeof item !== 'object' || depth > 8) return undefined;
    const proto = Object.getPrototypeOf(item);
    if (Array.isArray(item)) {
      budget -= item.length;
      if (!arrayPrototype(proto) || budget < 0) return undefined;
      const copy = [];
      for (let index = 0; index < item.length; index += 1) {
        const inner = index in item ? canonical(item[index], depth + 1) : undefined;
        if (inner === undefined) return undefined;
        copy.push(inner);
      }
      return copy;
    }
    if ((proto !== null && !objectPrototype(proto)) || Object.getOwnPropertySymbols(item).length)
      return undefined;
    const keys = Object.keys(item).sort();
    budget -= keys.length;
    if (budget < 0) return undefined;
    const copy = {};
    for (const key of keys) {
      const described = Object.getOwnPropertyDescriptor(item, key);
      if (!described || !('value' in described)) return undefined;
      const inner = canonical(described.value, depth + 1);
      if (inner === undefined) return undefined;
      copy[key] = inner;
    }
    return copy;
  };
  const shape = canonical(value, 0);
  if (shape === undefined) return undefined;
  const text = JSON.stringify(shape);
  return text.length <= VALUE_LIMIT ? text : undefined;
};`;
