import { z } from 'zod';

/**
 * Schema pieces that stay portable across MCP clients. The SDK's JSON Schema conversion turns
 * `.nullable()` on a primitive into a type array (`["string", "null"]`) and `z.unknown()` into a bare `{}`,
 * both flagged by the MCP Inspector as unportable; these forms convert to `anyOf` branches.
 */
export function orNull<Schema extends z.ZodType>(schema: Schema) {
  return z.union([schema, z.null().describe('Not available.')]);
}

/**
 * Any JSON value, spelled as the union of the JSON types (a bare `{}` or a described one constrains
 * nothing, which the Inspector flags).
 */
// Typed as unknown: callers hold parsed JSON typed loosely, and JSON values are a subset of unknown.
export const anyJsonValue: z.ZodType<unknown> = z
  .json()
  .describe('Any JSON value, as the caller recorded it.');
