import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnv } from '../env';
import { decryptSecret, encryptSecret, loadAppSecret, SecretBoxError } from './secret-box';

const SECRET = 'a-server-secret-of-at-least-32-characters';

describe('secret box', () => {
  it('round-trips, as iv.tag.ciphertext in base64url, different every time', () => {
    const box = encryptSecret(SECRET, 'sk-live-密钥-0123456789');
    expect(box).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(box).not.toContain('sk-live');
    expect(decryptSecret(SECRET, box)).toBe('sk-live-密钥-0123456789');
    expect(encryptSecret(SECRET, 'same')).not.toBe(encryptSecret(SECRET, 'same'));
  });

  it('refuses a tampered box or another secret', () => {
    const box = encryptSecret(SECRET, 'sk-abc');
    const [iv, tag, data] = box.split('.') as [string, string, string];
    const flipped = Buffer.from(data, 'base64url');
    flipped[0] = (flipped[0] ?? 0) ^ 1;
    expect(() => decryptSecret(SECRET, [iv, tag, flipped.toString('base64url')].join('.'))).toThrow(
      SecretBoxError,
    );
    expect(() => decryptSecret(`${SECRET}!`, box)).toThrow(SecretBoxError);
    expect(() => decryptSecret(SECRET, 'not-a-box')).toThrow(SecretBoxError);
    expect(() => decryptSecret(SECRET, `${iv}.${tag.slice(2)}.${data}`)).toThrow(SecretBoxError);
  });

  it('APP_SECRET must be at least 32 characters, and is never echoed', () => {
    expect(() => parseEnv({ APP_SECRET: 'short-secret' })).toThrow(
      'Invalid environment variable APP_SECRET: must be at least 32 characters (e.g. openssl rand -hex 32)',
    );
    try {
      parseEnv({ APP_SECRET: 'short-secret' });
    } catch (err) {
      expect((err as Error).message).not.toContain('short-secret');
    }
    expect(loadAppSecret(parseEnv({ APP_SECRET: SECRET }))).toBe(SECRET);
  });

  it('without APP_SECRET: creates DATA_DIR/app-secret once (0600) and reads it back after a restart', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-box-'));
    try {
      const dataDir = path.join(dir, 'data');
      const env = { APP_SECRET: undefined, NODE_ENV: 'production' as const, dataDir };
      const first = loadAppSecret(env);
      const file = path.join(dataDir, 'app-secret');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file)).toHaveLength(32);
      const box = encryptSecret(first, 'sk-kept');
      // As a restarted process would: the path is new to the cache (a symlink), the file is not.
      const link = path.join(dir, 'link');
      fs.symlinkSync(dataDir, link);
      expect(decryptSecret(loadAppSecret({ ...env, dataDir: link }), box)).toBe('sk-kept');
      expect(fs.readFileSync(file).equals(Buffer.from(first as Uint8Array))).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a truncated secret file stops the start with a clear message', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secret-box-'));
    try {
      fs.writeFileSync(path.join(dir, 'app-secret'), 'too short');
      expect(() => loadAppSecret({ APP_SECRET: undefined, NODE_ENV: 'production', dataDir: dir })).toThrow(
        /app-secret holds 9 bytes; a server secret needs at least 32/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
