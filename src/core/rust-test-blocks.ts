/**
 * Rust keeps unit tests inside the source (`#[cfg(test)] mod tests { … }`). The trusted runs take a
 * crate's code from the Player but its in-source tests from the base: this swaps the top-level
 * `#[cfg(test)]` items of the Player's file for the base's.
 */
export function withBaseTestBlocks(player: string, base: string | undefined): string {
  const kept = removeRanges(player, testItemRanges(player));
  const baseItems = base ? testItemRanges(base).map(([start, end]) => base.slice(start, end)) : [];
  if (baseItems.length === 0) return kept;
  return `${kept.replace(/\s*$/, '\n')}\n${baseItems.join('\n\n')}\n`;
}

/** [start, end) of each top-level item carrying a `#[cfg(…test…)]` attribute. */
export function testItemRanges(source: string): [number, number][] {
  const ranges: [number, number][] = [];
  let depth = 0;
  walkCode(source, 0, (index) => {
    if (depth === 0 && source.startsWith('#[cfg(', index)) {
      const attributeEnd = matching(source, index + 1, '[', ']');
      const attribute = source.slice(index, attributeEnd);
      if (/\btest\b/.test(attribute) && !/not\s*\(\s*test/.test(attribute)) {
        const end = itemEnd(source, attributeEnd);
        ranges.push([index, end]);
        return end;
      }
    }
    if (source[index] === '{') depth++;
    else if (source[index] === '}') depth--;
    return index + 1;
  });
  return ranges;
}

/** Past the item that follows an attribute: up to its `;`, or its block's closing brace. */
function itemEnd(source: string, from: number): number {
  return walkCode(source, from, (index) => {
    const char = source[index];
    if (char === ';') return { stop: index + 1 };
    if (char === '{') return { stop: matching(source, index, '{', '}') };
    if (char === '[' && source[index - 1] === '#') return matching(source, index, '[', ']');
    return index + 1;
  });
}

/** Index just past the bracket that closes the one at `open`. */
function matching(source: string, open: number, opening: string, closing: string): number {
  let depth = 0;
  return walkCode(source, open, (index) => {
    if (source[index] === opening) depth++;
    else if (source[index] === closing && --depth === 0) return { stop: index + 1 };
    return index + 1;
  });
}

/**
 * Visits each code character from `from` on, past comments and literals. `visit` returns the index to
 * go on from, or `{ stop }` to end the walk there; the walk returns where it ended.
 */
function walkCode(
  source: string,
  from: number,
  visit: (index: number) => number | { stop: number },
): number {
  let index = from;
  while (index < source.length) {
    const skipped = skipNonCode(source, index);
    if (skipped !== index) {
      index = skipped;
      continue;
    }
    const next = visit(index);
    if (typeof next !== 'number') return next.stop;
    index = next;
  }
  return source.length;
}

/** Past a comment, string or char literal starting at `index`; `index` itself when none starts there. */
function skipNonCode(source: string, index: number): number {
  const rest = source.slice(index, index + 3);
  if (rest.startsWith('//')) {
    const end = source.indexOf('\n', index);
    return end === -1 ? source.length : end;
  }
  if (rest.startsWith('/*')) {
    let depth = 0;
    let at = index;
    while (at < source.length) {
      if (source.startsWith('/*', at)) {
        depth++;
        at += 2;
      } else if (source.startsWith('*/', at)) {
        at += 2;
        if (--depth === 0) return at;
      } else at++;
    }
    return source.length;
  }
  const raw = /^b?r(#*)"/.exec(source.slice(index, index + 40));
  if (raw && !/\w/.test(source[index - 1] ?? '')) {
    const close = `"${raw[1]}`;
    const end = source.indexOf(close, index + raw[0].length);
    return end === -1 ? source.length : end + close.length;
  }
  if (source[index] === '"') {
    let at = index + 1;
    while (at < source.length && source[at] !== '"') at += source[at] === '\\' ? 2 : 1;
    return at + 1;
  }
  if (source[index] === "'") {
    // A char literal ('a', '\n', '\u{1F600}'), not a lifetime ('a).
    if (source[index + 1] === '\\') return source.indexOf("'", index + 3) + 1 || source.length;
    const width = source.codePointAt(index + 1)! > 0xffff ? 2 : 1;
    if (source[index + 1 + width] === "'") return index + 2 + width;
  }
  return index;
}

function removeRanges(source: string, ranges: [number, number][]): string {
  let result = '';
  let from = 0;
  for (const [start, end] of ranges) {
    result += source.slice(from, start);
    from = end;
  }
  return result + source.slice(from);
}
