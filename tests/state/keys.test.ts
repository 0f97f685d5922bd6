import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePublicKeys, signatureProblem, signRecord, signingKey } from '../../src/state/keys.js';

const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
let stateDir: string;
afterEach(() => stateDir && rmSync(stateDir, { recursive: true, force: true }));

const coachgate = (...args: string[]) =>
  spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });

describe('key management', () => {
  it('key init creates a 0600 key in --state-dir once; key show prints the public key', () => {
    stateDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-keys-')), 'state');
    expect(coachgate('key', 'show', '--state-dir', stateDir).status).toBe(2);
    const created = coachgate('key', 'init', '--state-dir', stateDir);
    expect(created.status).toBe(0);
    expect(created.stdout).toMatch(/^created key [0-9a-f]{16} /);
    expect(statSync(path.join(stateDir, 'keys/ed25519.pem')).mode & 0o777).toBe(0o600);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    const shown = coachgate('key', 'show', '--state-dir', stateDir);
    expect(shown.stdout.trim()).toMatch(/^ed25519:[A-Za-z0-9+/=]+$/);
    expect(created.stdout).toContain(shown.stdout.trim());
    expect(coachgate('key', 'init', '--state-dir', stateDir).stdout).toMatch(
      /^kept the existing key/,
    );
  });

  it('signs canonical JSON: key order does not matter, any edited field does', async () => {
    const key = await signingKey();
    const trusted = parsePublicKeys([key.public_key]);
    const signed = signRecord({ b: 1, a: { y: 2, x: [3] } }, key);
    expect(
      signatureProblem(
        { a: { x: [3], y: 2 }, b: 1, key_id: signed.key_id, signature: signed.signature },
        trusted,
      ),
    ).toBeNull();
    expect(signatureProblem({ ...signed, b: 2 }, trusted)).toMatch(/invalid signature/);
    expect(signatureProblem({ b: 1 }, trusted)).toBe('has no signature');
    expect(() => parsePublicKeys(['ed25519:bm90IGEga2V5'])).toThrow(/Trusted key .* is not usable/);
  });
});
