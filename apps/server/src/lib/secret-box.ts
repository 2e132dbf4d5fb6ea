import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Env } from '../env';

/** The server secret: APP_SECRET as text, or the raw bytes of DATA_DIR/app-secret. */
export type AppSecret = string | Uint8Array;

const IV_BYTES = 12;
const TAG_BYTES = 16;
const SECRET_FILE_BYTES = 32;

export class SecretBoxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretBoxError';
  }
}

const keys = new Map<string, Buffer>();

/**
 * One AES key per secret, derived with HKDF so the raw secret (which may be a human-chosen
 * string) is never used as a key directly, and so a future second use of the secret gets its
 * own key by changing `info`.
 */
function keyFor(secret: AppSecret): Buffer {
  const ikm = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  const cacheKey = ikm.toString('base64');
  let key = keys.get(cacheKey);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', ikm, 'callpilot', 'secret-box:v1', 32));
    keys.set(cacheKey, key);
  }
  return key;
}

/** AES-256-GCM; the answer is `iv.tag.ciphertext`, each base64url, so it fits a text column. */
export function encryptSecret(secret: AppSecret, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyFor(secret), iv);
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data].map((part) => part.toString('base64url')).join('.');
}

/** Throws SecretBoxError when the box was altered or sealed with another secret. */
export function decryptSecret(secret: AppSecret, box: string): string {
  const parts = box.split('.');
  if (parts.length !== 3) throw new SecretBoxError('malformed secret box');
  const [iv, tag, data] = parts.map((part) => Buffer.from(part as string, 'base64url')) as [
    Buffer,
    Buffer,
    Buffer,
  ];
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretBoxError('malformed secret box');
  try {
    const decipher = createDecipheriv('aes-256-gcm', keyFor(secret), iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretBoxError('secret box was tampered with or sealed with another secret');
  }
}

const loaded = new Map<string, AppSecret>();
let testSecret: Buffer | undefined;

/**
 * The server secret: APP_SECRET when set; otherwise DATA_DIR/app-secret, created on first start
 * (32 random bytes, mode 0600). Every process sharing one database must use the same secret,
 * which a file only guarantees for the single-process embedded database.
 *
 * Tests without APP_SECRET get a random secret for the process, so a test run never writes a
 * secret file into the working directory.
 */
export function loadAppSecret(env: Pick<Env, 'APP_SECRET' | 'dataDir' | 'NODE_ENV'>): AppSecret {
  if (env.APP_SECRET) return env.APP_SECRET;
  if (env.NODE_ENV === 'test') {
    testSecret ??= randomBytes(SECRET_FILE_BYTES);
    return testSecret;
  }
  const file = path.join(env.dataDir, 'app-secret');
  const cached = loaded.get(file);
  if (cached) return cached;
  const secret = readOrCreateSecretFile(file);
  loaded.set(file, secret);
  return secret;
}

function readOrCreateSecretFile(file: string): Buffer {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    const fresh = randomBytes(SECRET_FILE_BYTES);
    // 'wx' fails when the file exists, so two processes starting at once cannot each write their own.
    fs.writeFileSync(file, fresh, { flag: 'wx', mode: 0o600 });
    return fresh;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const existing = fs.readFileSync(file);
  if (existing.length < SECRET_FILE_BYTES) {
    throw new SecretBoxError(
      `${file} holds ${existing.length} bytes; a server secret needs at least ${SECRET_FILE_BYTES}. ` +
        'Restore it from a backup, or set APP_SECRET (stored API keys must then be entered again).',
    );
  }
  return existing;
}
