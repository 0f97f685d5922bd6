import {
  createHash,
  randomBytes,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
  type KeyObject,
} from 'node:crypto';
import { constants } from 'node:fs';
import { link, open, readFile, unlink } from 'node:fs/promises';
import path from 'node:path';
import { CallerError } from '../errors/errors.js';
import { canonicalJson } from '../tasks/player-report.js';
import { ensurePrivateDirectory, stateRoot } from './state-directory.js';

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
  const pem = await readKeyFile();
  return pem === undefined ? undefined : fromPem(pem);
}

async function readKeyFile(): Promise<string | undefined> {
  try {
    return await readFile(privateKeyPath(), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

function fromPem(pem: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw damagedKey(`is not a private key (${(error as Error).message})`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw damagedKey(`holds a ${privateKey.asymmetricKeyType} key, not an Ed25519 one`);
  return { ...describe(createPublicKey(privateKey)), privateKey };
}

/** A key file that is not a usable key: which file, and the two ways out. */
function damagedKey(problem: string): CallerError {
  const file = privateKeyPath();
  return new CallerError(
    `The signing key ${file} ${problem}: coachgate can neither sign nor verify with it.`,
    `Restore the key from a backup; or, to start with a new key, move the file aside (mv ${file} ${file}.damaged) and run coachgate key init (records signed by the old key then verify only if its public key is in coachgate.trusted_keys).`,
  );
}

/** The key this process loaded first, per state directory: the only key it will ever sign with. */
const loaded = new Map<string, SigningKey>();

async function loadedKey(): Promise<SigningKey | undefined> {
  const file = privateKeyPath();
  const known = loaded.get(file);
  if (known) return known;
  const key = await existingSigningKey();
  if (key) loaded.set(file, loaded.get(file) ?? key);
  return loaded.get(file);
}

/**
 * The key to sign with. Never creates one (`coachgate key init` or server start does, before any run):
 * a key that appears later could have been made by code the server ran. The file must still hold the
 * key this process loaded; a deleted or replaced key file stops signing instead of being adopted.
 */
export async function signingKey(): Promise<SigningKey> {
  const key = await loadedKey();
  if (!key)
    throw new CallerError(
      `No signing key in ${stateRoot()}: coachgate signs nothing until one exists.`,
      'Run `coachgate key init` (coachgate serve also creates it at start), then retry.',
    );
  const onDisk = await readKeyFile();
  const now = onDisk === undefined ? undefined : fromPem(onDisk).key_id;
  if (now !== key.key_id)
    throw new CallerError(
      `Refusing to sign: the signing key file ${privateKeyPath()} ${now === undefined ? 'was deleted' : `now holds key ${now}`} since this server loaded key ${key.key_id}.`,
      'Restore the original key file and retry, or, if the change was deliberate, restart the server (records signed by the old key then verify only if it is listed in coachgate.trusted_keys).',
    );
  return key;
}

/** The local key to verify with (the one this process loaded), or none when no key exists yet. */
export async function localTrustedKeys(): Promise<TrustedKey[]> {
  const key = await loadedKey();
  return key ? [keyOf(key)] : [];
}

/**
 * `coachgate key init` and server start: creates the key unless one exists; never replaces a key.
 * Written to a private temp file, then hard-linked into place: link() fails when the name exists, so
 * of several processes racing on an empty state directory exactly one wins and all read its key.
 */
export async function initKey(): Promise<{ created: boolean; key: SigningKey }> {
  const existing = await existingSigningKey();
  if (existing) return { created: false, key: existing };
  const file = privateKeyPath();
  await ensurePrivateDirectory(path.dirname(file));
  const { privateKey } = generateKeyPairSync('ed25519');
  const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  await writeNewPrivateFile(temp, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  let created = true;
  try {
    await link(temp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    created = false;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  const key = await existingSigningKey();
  if (!key) throw new Error(`${file} vanished right after it was created`);
  return { created, key };
}

/** O_EXCL + O_NOFOLLOW, 0600, fsynced: complete before anyone can see it under the final name. */
async function writeNewPrivateFile(file: string, content: string): Promise<void> {
  const handle = await open(
    file,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    await handle.writeFile(content, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
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
