import { z } from 'zod';

/**
 * Schema pieces that stay portable across MCP clients. The SDK's JSON Schema conversion turns
 * `.nullable()` on a primitive into a type array (`["string", "null"]`) and `z.unknown()` into a bare `{}`,
 * both flagged by the MCP Inspector as unportable; these forms convert to `anyOf` and a described schema.
 */
export function orNull<Schema extends z.ZodType>(schema: Schema) {
  return z.union([schema, z.null().describe('Not available.')]);
}

/** Any JSON value, described rather than a bare `{}`. */
export const anyJsonValue = z.unknown().describe('Any JSON value, as the caller recorded it.');
