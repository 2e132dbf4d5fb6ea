import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { AppSecret } from '../../lib/secret-box';

/**
 * The short-lived public URL DashScope downloads a voice sample from: it cannot send our bearer
 * token, so the URL itself is the permission. The signature binds the clone, its project and the
 * expiry, under a key derived from the server secret for this one purpose (so a recording
 * signature can never pass for a sample's, nor the reverse).
 */

export const SAMPLE_URL_TTL_MS = 15 * 60 * 1000;

const keys = new Map<string, Buffer>();
function keyFor(secret: AppSecret): Buffer {
  const ikm = typeof secret === 'string' ? Buffer.from(secret, 'utf8') : Buffer.from(secret);
  const cacheKey = ikm.toString('base64');
  let key = keys.get(cacheKey);
  if (!key) {
    key = Buffer.from(hkdfSync('sha256', ikm, 'callpilot', 'voice-sample-url:v1', 32));
    keys.set(cacheKey, key);
  }
  return key;
}

const sign = (secret: AppSecret, projectId: string, cloneId: string, expires: number) =>
  createHmac('sha256', keyFor(secret)).update(`${projectId}:${cloneId}:${expires}`).digest('base64url');

/** `<publicBase>/api/public/voice-samples/<clone>.<expires>.<signature>.wav` */
export function sampleUrl(
  secret: AppSecret,
  publicBase: string,
  projectId: string,
  cloneId: string,
  now: number,
): string {
  const expires = now + SAMPLE_URL_TTL_MS;
  const token = `${cloneId}.${expires}.${sign(secret, projectId, cloneId, expires)}`;
  return `${publicBase.replace(/\/+$/, '')}/api/public/voice-samples/${token}.wav`;
}

/** The clone id a file name names, before its signature is checked against the clone's project. */
export function parseSampleFile(
  file: string,
): { cloneId: string; expires: number; signature: string } | null {
  const match = /^([0-9a-f-]{36})\.(\d{13})\.([A-Za-z0-9_-]{43})\.wav$/.exec(file);
  if (!match) return null;
  return { cloneId: match[1] as string, expires: Number(match[2]), signature: match[3] as string };
}

export function verifySample(
  secret: AppSecret,
  projectId: string,
  parsed: { cloneId: string; expires: number; signature: string },
  now: number,
): boolean {
  if (parsed.expires < now) return false;
  const expected = Buffer.from(sign(secret, projectId, parsed.cloneId, parsed.expires));
  const given = Buffer.from(parsed.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
