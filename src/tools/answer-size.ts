import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallerError } from '../errors/errors.js';

/**
 * The largest answer sent, as JSON. The MCP SDK's stdio client reads at most 10 MiB per message and
 * closes the connection past it (its ReadBuffer), taking the session with it; the envelope and
 * escaping add to the result, so answers stop well below.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

/** The refusal for an answer too large to send, or undefined when it fits. */
export function oversizedAnswer(toolName: string, result: CallToolResult): CallerError | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(result));
  if (bytes <= MAX_ANSWER_BYTES) return undefined;
  const mib = (count: number) => `${(count / 1024 / 1024).toFixed(1)} MiB`;
  return new CallerError(
    `The ${toolName} answer would be ${mib(bytes)}, over the ${mib(MAX_ANSWER_BYTES)} coachgate sends in one message (an MCP client closes the session past 10 MiB); nothing was returned.`,
    'Ask for less: a smaller task file or report, fewer files or tests per call.',
  );
}
