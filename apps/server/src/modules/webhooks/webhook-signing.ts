import { createHmac, randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@callpilot/contracts';

/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{body}` with the base64-decoded part of a `whsec_` secret,
 * sent as `v1,<base64>`; several signatures (a secret roll's overlap) are space-separated, and a
 * receiver accepts the message when any of them verifies.
 */

/** 24 random bytes, as the specification's minimum for symmetric secrets. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(24).toString('base64')}`;
}

/** The key bytes of a secret (with or without its `whsec_` prefix). */
export function webhookKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX)
    ? secret.slice(WEBHOOK_SECRET_PREFIX.length)
    : secret;
  return Buffer.from(encoded, 'base64');
}

/** One `v1,<base64>` signature. `timestamp` is in seconds, as the header carries it. */
export function signWebhook(secret: string | Buffer, id: string, timestamp: number, body: string): string {
  const key = typeof secret === 'string' ? webhookKey(secret) : secret;
  const mac = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export const WEBHOOK_USER_AGENT = 'CallPilot-Webhooks/1.0';

/**
 * Every header of one attempt: a fresh timestamp (receivers refuse old ones, so a retry or a
 * replay is signed anew), the same id, one signature per secret still signing.
 */
export function webhookHeaders(
  secrets: readonly (string | Buffer)[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': WEBHOOK_USER_AGENT,
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' '),
  };
}
