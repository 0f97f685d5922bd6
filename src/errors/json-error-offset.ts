/** JSON's whitespace, and a number from where its lexer stands (sticky). */
const WHITESPACE = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * Where text that JSON.parse refused first goes wrong, as an offset (text.length for an early end):
 * V8 names no position for an unexpected token (`[oops]`), and a corrupt report must say where it is
 * corrupt. Called only after JSON.parse failed; -1 if this scan finds nothing wrong.
 */
export function jsonErrorOffset(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw new SyntaxAt(at);
  };
  const skipWhitespace = () => {
    while (at < text.length && WHITESPACE.has(text[at]!)) at++;
  };
  const expect = (char: string) => (text[at] === char ? at++ : fail());
  const string = () => {
    expect('"');
    while (at < text.length && text[at] !== '"') {
      if (text[at]! < ' ') fail();
      if (text[at] !== '\\') at++;
      else if (text[at + 1] === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) at += 6;
      else if (ESCAPES.has(text[at + 1] ?? '')) at += 2;
      else {
        at++; // the offending character follows the backslash
        fail();
      }
    }
    expect('"');
  };
  const word = (literal: string) =>
    text.startsWith(literal, at) ? (at += literal.length) : fail();
  const list = (close: string, item: () => void) => {
    at++;
    skipWhitespace();
    if (text[at] === close) return void at++;
    for (;;) {
      item();
      skipWhitespace();
      if (text[at] === close) return void at++;
      expect(',');
    }
  };
  const value = (): void => {
    skipWhitespace();
    const char = text[at];
    if (char === '{')
      return list('}', () => {
        skipWhitespace();
        string();
        skipWhitespace();
        expect(':');
        value();
      });
    if (char === '[') return list(']', value);
    if (char === '"') return string();
    if (char === 't' || char === 'f' || char === 'n')
      return void word(char === 't' ? 'true' : char === 'f' ? 'false' : 'null');
    NUMBER.lastIndex = at;
    if (!NUMBER.test(text)) fail();
    at = NUMBER.lastIndex;
  };
  try {
    value();
    skipWhitespace();
    return at < text.length ? at : -1;
  } catch (error) {
    // Nesting too deep for this scan: the end is the best place it can name.
    return error instanceof SyntaxAt ? error.offset : text.length;
  }
}

class SyntaxAt {
  constructor(readonly offset: number) {}
}
