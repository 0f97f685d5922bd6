import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../core/errors.js';
import { canonicalJson } from '../core/player-report.js';
import { writeFileAtomically } from '../store/files.js';
import { ensurePrivateDirectory, stateRoot } from './location.js';

/** The server's Ed25519 identity. The public key is written `ed25519:<base64 SPKI DER>`. */
export interface SigningKey {
  key_id: string;
  public_key: string;
  privateKey: KeyObject;
}

/** What a record carries to prove the server wrote it. */
export interface Signed {
  key_id?: string;
  signature?: string;
}

const PREFIX = 'ed25519:';

export function privateKeyPath(): string {
  return path.join(stateRoot(), 'keys', 'ed25519.pem');
}

/** The key id: the first 16 hex digits of the SHA-256 of the public key's DER. */
function describe(publicKey: KeyObject): { key_id: string; public_key: string } {
  const der = publicKey.export({ type: 'spki', format: 'der' });
  return {
    key_id: createHash('sha256').update(der).digest('hex').slice(0, 16),
    public_key: `${PREFIX}${der.toString('base64')}`,
  };
}

/** The local key, or undefined when none was created yet (a fresh CI machine). */
export async function existingSigningKey(): Promise<SigningKey | undefined> {
  let pem: string;
  try {
    pem = await readFile(privateKeyPath(), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const privateKey = createPrivateKey(pem);
  return { ...describe(createPublicKey(privateKey)), privateKey };
}

let cached: Promise<SigningKey> | undefined;

/** The local key, created on first use (0600, in a 0700 directory). */
export function signingKey(): Promise<SigningKey> {
  cached ??= (async () => (await existingSigningKey()) ?? (await initKey()).key)();
  cached.catch(() => (cached = undefined));
  return cached;
}

/** `coachgate key init`: creates the key unless one exists; never replaces a key. */
export async function initKey(): Promise<{ created: boolean; key: SigningKey }> {
  const existing = await existingSigningKey();
  if (existing) return { created: false, key: existing };
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  await ensurePrivateDirectory(path.dirname(privateKeyPath()));
  await writeFileAtomically(
    privateKeyPath(),
    privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  );
  return { created: true, key: { ...describe(publicKey), privateKey } };
}

/** The signed bytes: the record without its signature, keys sorted (key_id included, so it is bound). */
function signedBytes(record: object): Buffer {
  const { signature: _signature, ...rest } = record as Signed & Record<string, unknown>;
  return Buffer.from(canonicalJson(rest), 'utf8');
}

export function signRecord<T extends object>(record: T, key: SigningKey): T & Required<Signed> {
  const withKey = { ...record, key_id: key.key_id };
  return {
    ...withKey,
    signature: sign(null, signedBytes(withKey), key.privateKey).toString('base64'),
  };
}

export interface TrustedKey {
  key_id: string;
  publicKey: KeyObject;
}

/** Parses `ed25519:<base64>` public keys; a malformed one is a configuration error naming it. */
export function parsePublicKeys(texts: string[]): TrustedKey[] {
  return texts.map((text) => {
    try {
      if (!text.startsWith(PREFIX)) throw new Error(`does not start with "${PREFIX}"`);
      const publicKey = createPublicKey({
        key: Buffer.from(text.slice(PREFIX.length), 'base64'),
        format: 'der',
        type: 'spki',
      });
      if (publicKey.asymmetricKeyType !== 'ed25519') throw new Error('not an Ed25519 key');
      return { key_id: describe(publicKey).key_id, publicKey };
    } catch (error) {
      throw new CallerError(
        `Trusted key ${JSON.stringify(text.slice(0, 40))} is not usable: ${(error as Error).message}.`,
        'Use the line printed by `coachgate key show`.',
      );
    }
  });
}

export function keyOf(key: SigningKey): TrustedKey {
  return { key_id: key.key_id, publicKey: createPublicKey(key.privateKey) };
}

/** Null when the record is signed by one of `keys`; otherwise what is wrong with its signature. */
export function signatureProblem(record: object, keys: TrustedKey[]): string | null {
  const { key_id: keyId, signature } = record as Signed;
  if (!signature || !keyId) return 'has no signature';
  const key = keys.find((candidate) => candidate.key_id === keyId);
  if (!key) return `is signed by key ${keyId}, which is not a trusted key`;
  let valid: boolean;
  try {
    valid = verify(null, signedBytes(record), key.publicKey, Buffer.from(signature, 'base64'));
  } catch {
    valid = false;
  }
  return valid
    ? null
    : `has an invalid signature (key ${keyId}): it was changed after signing or forged`;
}
