import { describe, expect, it } from 'vitest';
import { boundedLines, boundedMessage, counted } from '../../src/errors/quote.js';

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

  it('leaves out the last lines, and says how many, rather than cut each to nothing', () => {
    // 60 findings of 90 characters: at a fair share of 2,000 each would keep 30 characters.
    const lines = Array.from({ length: 60 }, (_, n) => `- finding ${n} ${'y'.repeat(75)}`);
    const text = boundedLines(lines, 2_000, (count) => `- and ${count} more`);
    expect(text.length).toBeLessThanOrEqual(2_000);
    const shown = text.split('\n');
    const more = Number(/^- and (\d+) more$/.exec(shown.at(-1)!)![1]);
    expect(shown.slice(0, -1)).toEqual(lines.slice(0, lines.length - more));
    expect(shown.length - 1).toBeGreaterThan(15);
  });

  it('cuts one long message within the limit, marker included', () => {
    const text = boundedMessage('z'.repeat(10_000), 2_000);
    expect(text.length).toBeLessThanOrEqual(2_000);
    expect(text).toMatch(/^z+… \(\d+ more characters\)$/);
    expect(Number(/\((\d+) more/.exec(text)![1]) + text.indexOf('…')).toBe(10_000);
  });
});

describe('counted', () => {
  it('puts the noun in the number it takes', () => {
    expect([0, 1, 2].map((count) => counted(count, 'test'))).toEqual([
      '0 tests',
      '1 test',
      '2 tests',
    ]);
    expect(counted(1, 'dependency', 'dependencies')).toBe('1 dependency');
    expect(counted(3, 'dependency', 'dependencies')).toBe('3 dependencies');
  });
});
