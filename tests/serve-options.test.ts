import { describe, expect, it } from 'vitest';
import { parseListen, parseServeOptions } from '../src/server/serve-options.js';

describe('serve options', () => {
  it('reads [HOST:]PORT with a loopback default and refuses anything else', () => {
    expect(parseListen('8765')).toEqual({ host: '127.0.0.1', port: 8765 });
    expect(parseListen('0.0.0.0:80')).toEqual({ host: '0.0.0.0', port: 80 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('localhost:9000')).toEqual({ host: 'localhost', port: 9000 });
    for (const bad of ['', 'host:', ':80', 'host:99999', '::1:80', 'a:b:80'])
      expect(() => parseListen(bad), bad).toThrow(/\[HOST:\]PORT/);
  });

  it('combines role, toolsets and read-only; HTTP needs tokens and roots and takes no role', () => {
    expect(
      parseServeOptions({ role: 'coach', toolsets: 'verify, verdict', 'read-only': true }).server,
    ).toMatchObject({ role: 'coach', toolsets: ['verify', 'verdict'], readOnly: true });
    expect(parseServeOptions({ toolsets: 'all' }).server.toolsets).toEqual([]);
    expect(() => parseServeOptions({ tokens: 'tokens.yaml' })).toThrow(
      /--tokens belongs to --http/,
    );
    expect(() => parseServeOptions({ http: '8765', root: ['.'] })).toThrow(
      /--http needs --tokens FILE/,
    );
    expect(() => parseServeOptions({ http: '8765', tokens: 't.yaml' })).toThrow(
      /--http needs at least one --root/,
    );
    expect(() =>
      parseServeOptions({ http: '8765', tokens: 't.yaml', root: ['.'], role: 'coach' }),
    ).toThrow(/role comes from each token/);
    const http = parseServeOptions({
      http: '8765',
      tokens: 't.yaml',
      root: ['.'],
      'allowed-hosts': 'coach.local:8765',
    }).http;
    expect(http).toMatchObject({
      host: '127.0.0.1',
      port: 8765,
      allowedHosts: ['coach.local:8765'],
      allowedOrigins: [],
      maxSessions: 16,
      idleTimeoutMs: 900_000,
    });
    const tuned = { http: '8765', tokens: 't.yaml', root: ['.'] };
    expect(
      parseServeOptions({ ...tuned, 'max-sessions': '4', 'idle-timeout': '30' }).http,
    ).toMatchObject({ maxSessions: 4, idleTimeoutMs: 30_000 });
    expect(() => parseServeOptions({ ...tuned, 'max-sessions': '0' })).toThrow(
      /--max-sessions expects a whole number above 0, not "0"/,
    );
    expect(() => parseServeOptions({ ...tuned, 'idle-timeout': '1.5' })).toThrow(
      /--idle-timeout expects a whole number/,
    );
    expect(() => parseServeOptions({ 'idle-timeout': '30' })).toThrow(
      /--idle-timeout belongs to --http/,
    );
  });
});
