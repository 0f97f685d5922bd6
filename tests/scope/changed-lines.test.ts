import { describe, expect, it } from 'vitest';
import { changedLines } from '../../src/scope/changed-lines.js';

const text = (...lines: string[]) => lines.join('\n') + '\n';

describe('changedLines: the lines of the new text the change wrote', () => {
  it('names added and rewritten lines, and both neighbours of a deletion', () => {
    const base = text('a', 'b', 'c', 'd', 'e');
    expect(changedLines(base, base)).toEqual([]);
    expect(changedLines(base, text('a', 'b', 'x', 'c', 'd', 'e'))).toEqual([3]);
    expect(changedLines(base, text('a', 'B', 'c', 'd', 'e'))).toEqual([2]);
    expect(changedLines(base, text('a', 'b', 'd', 'e'))).toEqual([2, 3]);
  });

  it('finds an edit between moved lines, not only the common head and tail', () => {
    const base = text('class A {', '  m() {}', '}', 'class B {', '  n() {}', '}');
    const now = text('class B {', '  n() {}', '}', 'class A {', '  m() { return 1; }', '}');
    const changed = changedLines(base, now)!;
    expect(changed).toContain(5);
    expect(changed).not.toContain(2);
  });

  it("is undefined for a file the base did not have: every line is the Player's", () => {
    expect(changedLines(undefined, text('a'))).toBeUndefined();
  });
});
