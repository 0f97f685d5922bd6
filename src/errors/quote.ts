/** Longest piece of caller input an error message repeats. */
export const QUOTE_LIMIT = 80;

/**
 * A short, JSON-quoted prefix of caller input for error messages: echoing a 9 MiB argument back doubles it
 * and can drop the client's session.
 */
export function quotePrefix(input: string, limit = QUOTE_LIMIT): string {
  if (input.length <= limit) return JSON.stringify(input);
  return `${JSON.stringify(input.slice(0, limit))}… (${input.length - limit} more characters)`;
}

/** Longest error text a tool returns: whatever an error message embeds, the answer stays small. */
export const MESSAGE_LIMIT = 2_000;

/** `text` in at most `limit` characters, saying how many were left out. */
export function boundedMessage(text: string, limit = MESSAGE_LIMIT): string {
  if (text.length <= limit) return text;
  const marker = (omitted: number) => `… (${omitted} more characters)`;
  // The marker's width with the largest count it could show: the cut never runs over `limit`.
  const kept = Math.max(0, limit - marker(text.length).length);
  if (kept > 0) return `${text.slice(0, kept)}${marker(text.length - kept)}`;
  return limit > 0 ? '…' : '';
}

/** A line cut shorter than this says too little to keep its place: the last lines give way. */
const USEFUL_SHARE = 100;

/**
 * Lines joined within `limit` characters, each given a fair share: short lines stay whole and the
 * longest are cut to what is left, so one long line never pushes the lines after it out of the text
 * (a refusal's last reason is as likely to be the one that matters as its first). When there are
 * too many lines for each to keep a useful share, the last ones are left out and `more` says how
 * many.
 */
export function boundedLines(
  lines: readonly string[],
  limit = MESSAGE_LIMIT,
  more = (count: number) => `… (${count} more lines)`,
): string {
  for (let shown = lines.length; ; shown -= 1) {
    const kept = lines.slice(0, shown);
    const tail = shown < lines.length ? [more(lines.length - shown)] : [];
    const shares = fairShares(kept, limit - tail.reduce((sum, line) => sum + line.length + 1, 0));
    const useful = shares.every(
      (share, index) => share >= Math.min(kept[index]!.length, USEFUL_SHARE),
    );
    if (useful || shown <= 1)
      return [...kept.map((line, index) => boundedMessage(line, shares[index]!)), ...tail].join(
        '\n',
      );
  }
}

/** Each line's length within `limit` (newlines between them counted), shortest lines served first. */
function fairShares(lines: readonly string[], limit: number): number[] {
  const shares = new Array<number>(lines.length);
  let left = limit - Math.max(0, lines.length - 1);
  const shortestFirst = lines.map((_, index) => index);
  shortestFirst.sort((a, b) => lines[a]!.length - lines[b]!.length);
  shortestFirst.forEach((index, position) => {
    const share = Math.max(0, Math.floor(left / (lines.length - position)));
    shares[index] = Math.min(lines[index]!.length, share);
    left -= shares[index]!;
  });
  return shares;
}

/** `1 task`, `2 tasks`: a count with its noun in the number it takes. */
export function counted(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}
