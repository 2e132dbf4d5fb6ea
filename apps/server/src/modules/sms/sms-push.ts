import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AppSecret } from '../../lib/secret-box';

export type SmsPushProvider = 'aliyun' | 'tencent';
export type SmsPushKind = 'receipts' | 'replies';

/**
 * The token in a project's push addresses: an HMAC of provider and project under the app secret,
 * so the address itself is the vendor's credential (vendors sign nothing we could check) and no
 * table holds it. Changing APP_SECRET changes every address, as it does every encrypted key.
 */
export function smsPushToken(secret: AppSecret, provider: SmsPushProvider, projectId: string): string {
  return createHmac('sha256', secret).update(`sms-push:${provider}:${projectId}`).digest('base64url');
}

export function verifySmsPushToken(
  secret: AppSecret,
  provider: SmsPushProvider,
  projectId: string,
  token: string,
): boolean {
  const expected = Buffer.from(smsPushToken(secret, provider, projectId));
  const given = Buffer.from(token);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function smsPushPath(
  secret: AppSecret,
  provider: SmsPushProvider,
  projectId: string,
  kind: SmsPushKind,
): string {
  const token = smsPushToken(secret, provider, projectId);
  return `/api/sms-push/${provider}/${encodeURIComponent(projectId)}/${token}/${kind}`;
}

/** The addresses to enter in the vendor's console (回执 and 上行 push), under `baseUrl`. */
export function smsPushUrls(
  secret: AppSecret,
  baseUrl: string,
  provider: SmsPushProvider,
  projectId: string,
): { receipts: string; replies: string } {
  const base = baseUrl.replace(/\/+$/, '');
  return {
    receipts: base + smsPushPath(secret, provider, projectId, 'receipts'),
    replies: base + smsPushPath(secret, provider, projectId, 'replies'),
  };
}
