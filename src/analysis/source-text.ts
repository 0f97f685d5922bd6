/** Small text helpers shared by the line scans, for code and config read without a parser. */

/** Cuts a trailing comment that starts with `marker` outside single- or double-quoted strings. */
export function stripComment(line: string, marker: string): string {
  let quote: string | undefined;
  for (let index = 0; index < line.length; index += 1) {
    const char = line[index];
    if (quote !== undefined) {
      if (char === '\\') index += 1;
      else if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (line.startsWith(marker, index)) {
      return line.slice(0, index);
    }
  }
  return line;
}

/** The text with its single- and double-quoted strings removed, so brackets inside them do not count. */
export function withoutStrings(text: string): string {
  return text.replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'/g, '');
}

/** Open brackets minus closed ones, outside strings. */
export function bracketDepth(text: string): number {
  const code = withoutStrings(text);
  return (code.match(/[[({]/g) ?? []).length - (code.match(/[\])}]/g) ?? []).length;
}

export interface SourceFile {
  path: string;
  text: string;
}
