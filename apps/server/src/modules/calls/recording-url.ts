import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppSecret } from '../../lib/secret-box';

export const RECORDING_URL_TTL_MS = 10 * 60 * 1000;

/**
 * Signed, expiring recording URLs, so the browser's <audio> element (which cannot send a bearer
 * header) streams with native Range requests. Membership is checked when one is issued; the
 * signature binds project, call and expiry, the way an S3 presigned URL will later.
 */
export function signRecording(secret: AppSecret, projectId: string, callId: string, expires: number): string {
  return createHmac('sha256', secret)
    .update(`recording:${projectId}:${callId}:${expires}`)
    .digest('base64url');
}

export function recordingUrl(
  secret: AppSecret,
  projectId: string,
  callId: string,
  now = Date.now(),
  ttlMs = RECORDING_URL_TTL_MS,
) {
  const expires = now + ttlMs;
  const signature = signRecording(secret, projectId, callId, expires);
  return {
    url: `/api/recordings/${encodeURIComponent(projectId)}/${encodeURIComponent(callId)}.wav?expires=${expires}&signature=${signature}`,
    expiresAt: new Date(expires).toISOString(),
  };
}

export function verifyRecordingSignature(
  secret: AppSecret,
  projectId: string,
  callId: string,
  expires: number,
  signature: string,
  now = Date.now(),
): boolean {
  if (!Number.isFinite(expires) || expires < now) return false;
  const expected = Buffer.from(signRecording(secret, projectId, callId, expires));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
