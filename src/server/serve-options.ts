import { existsSync } from 'node:fs';
import path from 'node:path';
import type { ServerOptions } from './create-server.js';
import { TOOLSETS, type Toolset } from '../tools/index.js';
import { SERVER_ROLES, type ServerRole } from '../tools/tool.js';

/** `coachgate serve` flags as parseArgs returns them. */
export interface ServeFlags {
  root?: string[];
  base?: string;
  role?: string;
  toolsets?: string;
  'read-only'?: boolean;
  http?: string;
  tokens?: string;
  'allowed-hosts'?: string;
  'allowed-origins'?: string;
  'max-sessions'?: string;
  'idle-timeout'?: string;
}

export interface HttpListen {
  host: string;
  port: number;
}

export interface ServeOptions {
  server: ServerOptions;
  /** Streamable HTTP instead of stdio. */
  http?: HttpListen & {
    tokensFile: string;
    /** Extra `Host` header values to accept (host:port), e.g. a container's or proxy's name. */
    allowedHosts: string[];
    /** Extra `Origin` values to accept, e.g. `https://coach.example`. */
    allowedOrigins: string[];
    /** Sessions one token may hold open at once; one more is refused (503). */
    maxSessions: number;
    /** A session unused this long is closed. */
    idleTimeoutMs: number;
  };
}

/** A mistake in the serve flags: the CLI prints it with the usage hint and exits 2. */
export class ServeUsageError extends Error {}

export function parseServeOptions(flags: ServeFlags): ServeOptions {
  const roots = (flags.root ?? []).map((root) => path.resolve(root));
  const missing = roots.find((root) => !existsSync(root));
  if (missing) throw new ServeUsageError(`--root ${missing} does not exist`);
  const server: ServerOptions = { roots, base: flags.base, readOnly: flags['read-only'] ?? false };
  if (flags.role !== undefined) server.role = parseRole(flags.role);
  if (flags.toolsets !== undefined) server.toolsets = parseToolsets(flags.toolsets);

  const httpOnly = [
    'tokens',
    'allowed-hosts',
    'allowed-origins',
    'max-sessions',
    'idle-timeout',
  ] as const;
  if (flags.http === undefined) {
    const stray = httpOnly.find((flag) => flags[flag] !== undefined);
    if (stray) throw new ServeUsageError(`--${stray} belongs to --http`);
    return { server };
  }
  // Over HTTP each token carries its role, and the server's own user picks the repositories it serves.
  if (flags.role !== undefined) {
    throw new ServeUsageError(
      'with --http the role comes from each token in --tokens; drop --role',
    );
  }
  if (!flags.tokens) {
    throw new ServeUsageError(
      '--http needs --tokens FILE (token → role); the HTTP server never runs without tokens',
    );
  }
  if (roots.length === 0) {
    throw new ServeUsageError(
      '--http needs at least one --root DIR: clients cannot choose what an HTTP server reads',
    );
  }
  return {
    server,
    http: {
      ...parseListen(flags.http),
      tokensFile: path.resolve(flags.tokens),
      allowedHosts: list(flags['allowed-hosts']),
      allowedOrigins: list(flags['allowed-origins']),
      maxSessions: positiveInteger('--max-sessions', flags['max-sessions'], DEFAULT_MAX_SESSIONS),
      idleTimeoutMs:
        1000 * positiveInteger('--idle-timeout', flags['idle-timeout'], DEFAULT_IDLE_TIMEOUT_S),
    },
  };
}

/** Per token: enough for a Coach and its sub-agents, few enough that one token cannot hoard memory. */
export const DEFAULT_MAX_SESSIONS = 16;
/** Seconds: a Coach turn's pauses fit; a client that vanished without DELETE frees its slot soon. */
export const DEFAULT_IDLE_TIMEOUT_S = 15 * 60;

function positiveInteger(flag: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!/^\d+$/.test(value) || number < 1)
    throw new ServeUsageError(
      `${flag} expects a whole number above 0, not ${JSON.stringify(value)}`,
    );
  return number;
}

function parseRole(value: string): ServerRole {
  if ((SERVER_ROLES as string[]).includes(value)) return value as ServerRole;
  throw new ServeUsageError(
    `--role must be one of ${SERVER_ROLES.join(', ')}, not ${JSON.stringify(value)}`,
  );
}

/** github-mcp-server style: a comma-separated list; `all` (or nothing) serves every toolset. */
function parseToolsets(value: string): Toolset[] {
  const names = list(value);
  if (names.length === 0 || names.includes('all')) return [];
  const unknown = names.find((name) => !Object.hasOwn(TOOLSETS, name));
  if (unknown) {
    const known = Object.keys(TOOLSETS).join(', ');
    throw new ServeUsageError(
      `unknown toolset ${JSON.stringify(unknown)}; toolsets: ${known}, all`,
    );
  }
  return names as Toolset[];
}

/** `PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to loopback. */
export function parseListen(value: string): HttpListen {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:[\]]+):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (!match || port > 65535)
    throw new ServeUsageError(`--http expects [HOST:]PORT, not ${JSON.stringify(value)}`);
  return { host: match[1]?.replace(/^\[(.*)\]$/, '$1') ?? '127.0.0.1', port };
}

function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}
