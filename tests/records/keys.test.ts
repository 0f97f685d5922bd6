import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  initKey,
  parsePublicKeys,
  signatureProblem,
  signRecord,
  signingKey,
} from '../../src/records/keys.js';
import { useStateDirectory } from '../../src/records/state-directory.js';
import { CLI as cli } from '../helpers/cli.js';

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

  it('8 processes racing key init on an empty state directory all end with one key', async () => {
    stateDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-keys-')), 'state');
    const outputs = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          new Promise<string>((resolve, reject) => {
            const child = spawn(process.execPath, [cli, 'key', 'init', '--state-dir', stateDir]);
            let out = '';
            child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
            child.on('error', reject);
            child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(out))));
          }),
      ),
    );
    const ids = outputs.map((out) => /key ([0-9a-f]{16})/.exec(out)?.[1]);
    expect(new Set(ids).size).toBe(1);
    expect(ids[0]).toBeDefined();
    expect(outputs.filter((out) => out.startsWith('created')).length).toBe(1);
    expect(coachgate('key', 'show', '--state-dir', stateDir).stdout).toContain(
      outputs[0]!.split('\n')[1]!.trim(),
    );
    // No temp file is left next to the key.
    expect(readdirSync(path.join(stateDir, 'keys'))).toEqual(['ed25519.pem']);
  });

  it('signing never creates a key, and stops when the key file is deleted or replaced', async () => {
    stateDir = path.join(mkdtempSync(path.join(os.tmpdir(), 'coachgate-keys-')), 'state');
    useStateDirectory(stateDir);
    try {
      await expect(signingKey()).rejects.toThrow(/No signing key in .*coachgate key init/);
      expect(() => statSync(path.join(stateDir, 'keys'))).toThrow();
      const { key } = await initKey();
      expect((await signingKey()).key_id).toBe(key.key_id);
      const file = path.join(stateDir, 'keys/ed25519.pem');
      unlinkSync(file);
      await expect(signingKey()).rejects.toThrow(
        new RegExp(`was deleted since this server loaded key ${key.key_id}`),
      );
      // Code that deletes the key and makes its own is not adopted either.
      const { key: other } = await initKey();
      expect(other.key_id).not.toBe(key.key_id);
      await expect(signingKey()).rejects.toThrow(
        new RegExp(`now holds key ${other.key_id} since this server loaded key ${key.key_id}`),
      );
      writeFileSync(file, key.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
      expect((await signingKey()).key_id).toBe(key.key_id);
    } finally {
      useStateDirectory(undefined);
    }
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
