import { describe, expect, it } from 'vitest';
import { boundedLines } from '../../src/core/quote.js';

describe('boundedLines', () => {
  it('keeps lines that fit whole', () => {
    expect(boundedLines(['- one', '- two'], 100)).toBe('- one\n- two');
  });

  it('cuts the long line, not the ones after it, and stays within the limit', () => {
    const long = `- ${'x'.repeat(5_000)}`;
    const text = boundedLines([long, '- short reason', '- last reason'], 1_000);
    expect(text.length).toBeLessThanOrEqual(1_000);
    const [first, second, third] = text.split('\n');
    expect(first).toMatch(/^- x+… \(\d+ more characters\)$/);
    expect(Number(/\((\d+) more/.exec(first!)![1]) + first!.indexOf('…')).toBe(long.length);
    expect([second, third]).toEqual(['- short reason', '- last reason']);
  });

  it('shares what is left equally between lines too long for it', () => {
    const lines = [`- ${'a'.repeat(3_000)}`, '- fits', `- ${'b'.repeat(3_000)}`];
    const [first, , third] = boundedLines(lines, 600).split('\n');
    expect(Math.abs(first!.length - third!.length)).toBeLessThanOrEqual(1);
    expect(first!.length + third!.length + '- fits'.length + 2).toBeGreaterThan(590);
  });
});
