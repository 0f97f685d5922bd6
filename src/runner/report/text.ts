/** Small text helpers shared by the parsers, the summary and the classifier. */

// CSI sequences (colours, cursor moves), OSC sequences (hyperlinks, titles) and pytest's junit
// rendering of ESC as the literal text `#x1B`.
const ANSI_PATTERN =
  // eslint-disable-next-line no-control-regex -- matching ESC and BEL is the point
  /(?:\u001b|#x1B)\[[0-9;?]*[A-Za-z]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI_PATTERN, '');
}

const MESSAGE_LIMIT = 300;

/** Shortens a failure text to a message: no colours, trimmed, at most `limit` characters. */
export function clipMessage(text: string, limit = MESSAGE_LIMIT): string {
  const clean = stripAnsi(text).trim();
  return clean.length <= limit ? clean : `${clean.slice(0, limit - 1)}…`;
}

/** Recognising a line never needs more of it than this; it keeps the patterns linear on giant lines. */
const MAX_SCANNED_LINE_LENGTH = 2000;

/**
 * The output's lines as a terminal shows them: no colours, only the last drawing of a line redrawn
 * with carriage returns (progress bars), giant lines cut.
 */
export function visibleLines(output: string): string[] {
  return stripAnsi(output)
    .split('\n')
    .map((line) => {
      const withoutEnding = line.endsWith('\r') ? line.slice(0, -1) : line;
      return withoutEnding
        .slice(withoutEnding.lastIndexOf('\r') + 1)
        .slice(0, MAX_SCANNED_LINE_LENGTH);
    });
}
