import { beforeAll, describe, expect, it } from 'vitest';
import { esmExports } from '../../src/analysis/esm-exports.js';
import { loadTypeScript } from '../../src/analysis/typescript-parser.js';

beforeAll(async () => {
  await loadTypeScript();
});

describe('the names an ES module exports, for the call recorder', () => {
  it('tells functions (wrapped) from other names (re-exported live)', () => {
    const text = [
      'export function f() {}',
      'export async function g() {}',
      'export const h = (x) => x, v = 1;',
      'export let counter = 0;',
      'export class Box {}',
      'const local = function () {};',
      'const value = 2;',
      'export { local as renamed, value };',
      "export { other } from './other.js';",
      "export * as space from './space.js';",
      "export * from './all.js';",
      'export default function () {}',
    ].join('\n');
    expect(esmExports('m.js', text)).toEqual({
      functions: ['f', 'g', 'h', 'renamed', 'default'],
      others: ['v', 'counter', 'Box', 'value', 'other', 'space'],
    });
  });

  it('reads a default export by what it holds', () => {
    expect(esmExports('a.js', 'const run = () => 1;\nexport default run;\n').functions).toEqual([
      'default',
    ]);
    expect(esmExports('b.js', 'export default class {}\n')).toEqual({
      functions: [],
      others: ['default'],
    });
    expect(esmExports('c.js', 'export default { a: 1 };\n').others).toEqual(['default']);
  });
});
