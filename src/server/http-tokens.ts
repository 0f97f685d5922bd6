import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import { SERVER_ROLES, type ServerRole } from '../tools/tool.js';

const MIN_TOKEN_LENGTH = 16;

const TokensFileSchema = z.record(
  z.string(),
  z.enum(SERVER_ROLES as [ServerRole, ...ServerRole[]]),
);

/** A configured bearer token, kept only as its SHA-256 so every comparison has the same length. */
export interface TokenEntry {
  digest: Buffer;
  role: ServerRole;
  /** Which entry of the file it is (1-based), for messages: the token itself is never printed. */
  index: number;
}

export class TokenTable {
  private constructor(private readonly entries: TokenEntry[]) {}

  /** `--tokens FILE`: a YAML or JSON mapping of token → role. Errors name the entry, never the token. */
  static async load(file: string): Promise<{ table: TokenTable; warnings: string[] }> {
    let mapping: unknown;
    try {
      mapping = parse(await readFile(file, 'utf8'));
    } catch (error) {
      throw new Error(`cannot read --tokens ${file}: ${(error as Error).message.split('\n')[0]}`, {
        cause: error,
      });
    }
    const parsed = TokensFileSchema.safeParse(mapping);
    if (!parsed.success) {
      throw new Error(`--tokens ${file} must map each token to one of ${SERVER_ROLES.join(', ')}`);
    }
    const tokens = Object.entries(parsed.data);
    if (tokens.length === 0) throw new Error(`--tokens ${file} has no tokens`);
    const entries = tokens.map(([token, role], position) => {
      if (token.length < MIN_TOKEN_LENGTH) {
        const advice = 'generate one with: openssl rand -hex 32';
        throw new Error(
          `--tokens ${file}: token ${position + 1} is shorter than ${MIN_TOKEN_LENGTH} characters; ${advice}`,
        );
      }
      return { digest: digest(token), role, index: position + 1 };
    });
    const shared = ((await stat(file)).mode & 0o077) !== 0;
    const warnings = shared ? [`--tokens ${file} is readable by other users; chmod 600 it`] : [];
    return { table: new TokenTable(entries), warnings };
  }

  /** One token made by coachgate itself (the autobuild driver's one-run player token). */
  static single(token: string, role: ServerRole): TokenTable {
    return new TokenTable([{ digest: digest(token), role, index: 1 }]);
  }

  /** The entry for an `Authorization: Bearer …` header, compared in constant time against every token. */
  match(authorization: string | undefined): TokenEntry | undefined {
    const presented = /^Bearer ([^\s]+)$/i.exec(authorization?.trim() ?? '')?.[1];
    if (!presented) return undefined;
    const candidate = digest(presented);
    let found: TokenEntry | undefined;
    // No early exit: the time taken does not say which token (or how much of one) matched.
    for (const entry of this.entries) if (timingSafeEqual(entry.digest, candidate)) found ??= entry;
    return found;
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}
