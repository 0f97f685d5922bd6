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

export function boundedMessage(text: string, limit = MESSAGE_LIMIT): string {
  return text.length <= limit
    ? text
    : `${text.slice(0, limit)}… (${text.length - limit} more characters omitted)`;
}
