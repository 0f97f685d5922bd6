/** One command of a shell command line's `&&`/`||`/`;` chain, located in the line. */
export interface ChainCommand {
  text: string;
  /** Offsets of `text` in the line: `end` is where the command's own arguments stop. */
  start: number;
  end: number;
  /** No pipe, redirection, background `&` or comment: arguments added at its end reach its program. */
  simple: boolean;
}

/**
 * The commands of a command line joined by `&&`, `||`, `;` or newlines, read as `sh` reads them:
 * operators inside quotes or after a backslash are not operators. Undefined when the line groups or
 * substitutes commands (`( … )`, `{ …; }`, `$( … )`, backquotes, here-documents): its top level is
 * then not a plain chain, and a splice could land inside another command.
 */
export function chainCommands(line: string): ChainCommand[] | undefined {
  const commands: ChainCommand[] = [];
  let start = 0;
  let simple = true;
  const close = (end: number) => {
    const text = line.slice(start, end);
    const leading = text.length - text.trimStart().length;
    if (text.trim() !== '') {
      commands.push({
        text: text.trim(),
        start: start + leading,
        end: start + leading + text.trim().length,
        simple,
      });
    }
    simple = true;
  };
  for (let at = 0; at < line.length; at += 1) {
    const char = line[at]!;
    const next = line[at + 1];
    if (char === '\\') at += 1;
    else if (char === "'") {
      at = line.indexOf("'", at + 1);
      if (at < 0) return undefined;
    } else if (char === '"') {
      at = closingDoubleQuote(line, at);
      if (at < 0) return undefined;
    } else if (/[()`]/.test(char) || (char === '<' && next === '<')) return undefined;
    else if (/[{}]/.test(char) && startsWord(line, at) && /^\s|^$|^;/.test(line.slice(at + 1)))
      return undefined;
    else if ((char === '&' && next === '&') || (char === '|' && next === '|')) {
      close(at);
      start = at + 2;
      at += 1;
    } else if (char === ';' || char === '\n') {
      close(at);
      start = at + 1;
    } else if (/[|&<>]/.test(char) || (char === '#' && startsWord(line, at))) simple = false;
  }
  close(line.length);
  return commands;
}

/** Inserts already quoted `words` after a command's own arguments, leaving the rest of the line as is. */
export function insertAfter(line: string, command: ChainCommand, words: string[]): string {
  return `${line.slice(0, command.end)} ${words.join(' ')}${line.slice(command.end)}`;
}

/** Single-quotes one word for a POSIX shell. */
export function shellQuote(word: string): string {
  return /^[\w./=:@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The index of the `"` closing the one at `open`, or -1; a substitution inside is refused (-1). */
function closingDoubleQuote(line: string, open: number): number {
  for (let at = open + 1; at < line.length; at += 1) {
    const char = line[at]!;
    if (char === '\\') at += 1;
    else if (char === '`' || (char === '$' && line[at + 1] === '(')) return -1;
    else if (char === '"') return at;
  }
  return -1;
}

function startsWord(line: string, at: number): boolean {
  return at === 0 || /[\s;&|]/.test(line[at - 1]!);
}
