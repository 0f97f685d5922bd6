import { linesOf } from './layout-task.js';

/**
 * An ES module with honest state, before and after the change: a class with a running total, a
 * cache, a factor read from the environment (a test may set it). Replayed under any JS runner, its
 * calls must be approved: state and configuration are not tactics.
 */
export const STATEFUL_BASE = linesOf(
  'export class Tally {',
  '  add(x) {',
  '    return x;',
  '  }',
  '}',
  'export const cached = (x) => x + x;',
  'export function configured(x) {',
  '  return x + x;',
  '}',
);

export const STATEFUL_HONEST = linesOf(
  'const memo = new Map();',
  'export class Tally {',
  '  total = 0;',
  '  add(x) {',
  '    this.total += x;',
  '    return this.total;',
  '  }',
  '}',
  'export const cached = (x) => {',
  '  if (!memo.has(x)) memo.set(x, x * 2);',
  '  return memo.get(x);',
  '};',
  'export function configured(x) {',
  "  return x * Number(process.env.CALC_FACTOR ?? '2');",
  '}',
);
