import { randomBytes } from 'node:crypto';
import { API_KEY_PREFIX } from '@callpilot/contracts';
import { hashToken } from '../auth/sessions.service';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A new key: the recognisable prefix (secret scanners and people can tell what leaked) and 256
 * random bits in base62 (43 characters, no symbols to break a copy-paste). Only `hash` is stored.
 */
export function generateApiKey(): { secret: string; hash: string; last4: string } {
  let n = BigInt(`0x${randomBytes(32).toString('hex')}`);
  let body = '';
  for (let i = 0; i < 43; i += 1) {
    body = BASE62[Number(n % 62n)] + body;
    n /= 62n;
  }
  const secret = `${API_KEY_PREFIX}${body}`;
  return { secret, hash: hashToken(secret), last4: secret.slice(-4) };
}
