/**
 * Following a blind transfer (RFC 3515 REFER): the `Refer-To` header we send, and the NOTIFYs
 * that report how the transfer target's call went, each carrying a `message/sipfrag` body
 * (RFC 3420) with the target's latest status line, under the implicit `refer` subscription
 * (RFC 6665 `Event` and `Subscription-State`).
 */
import { type NameAddr, parseNameAddr, parseParams, parseUri, type SipHeaders, type SipUri } from './message';

export interface SipfragStatus {
  status: number;
  reason: string;
}

/**
 * The status line opening a sipfrag body (`SIP/2.0 180 Ringing`). Null for a request-line
 * fragment or anything else: a transfer's progress is only ever reported as a status line.
 */
export function parseSipfrag(body: Buffer | string): SipfragStatus | null {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const firstLine = text.replace(/^(\r?\n)+/, '').split(/\r?\n/, 1)[0] ?? '';
  const match = /^SIP\/2\.0[ \t]+([1-6]\d\d)(?:[ \t]+(.*))?$/i.exec(firstLine.trim());
  if (!match) return null;
  return { status: Number(match[1]), reason: (match[2] ?? '').trim() };
}

export type ReferState = 'trying' | 'succeeded' | 'failed';

/** 1xx: still trying; 2xx: the target answered; anything else: the transfer failed. */
export function referStateOf(status: number): ReferState {
  if (status < 200) return 'trying';
  return status < 300 ? 'succeeded' : 'failed';
}

export interface SubscriptionState {
  state: 'active' | 'pending' | 'terminated' | string;
  reason?: string;
  expires?: number;
}

/** `Subscription-State: terminated;reason=noresource` (RFC 6665 §8.2.3); null when malformed. */
export function parseSubscriptionState(value: string): SubscriptionState | null {
  const semicolon = value.indexOf(';');
  const state = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  const params = parseParams(semicolon < 0 ? '' : value.slice(semicolon));
  if (!/^[a-z0-9\-.!%*_+`'~]+$/.test(state) || !params) return null;
  const result: SubscriptionState = { state };
  const reason = params.get('reason');
  if (reason) result.reason = reason.toLowerCase();
  const expires = params.get('expires');
  if (expires && /^\d{1,10}$/.test(expires)) result.expires = Number(expires);
  return result;
}

/**
 * Whether a NOTIFY's `Event` belongs to the REFER sent with `referCSeq`: package `refer`, and an
 * `id` equal to that CSeq when present (RFC 3515 §2.4.6; the first REFER's NOTIFYs may omit it).
 */
export function isReferEvent(value: string, referCSeq: number): boolean {
  const semicolon = value.indexOf(';');
  const eventPackage = (semicolon < 0 ? value : value.slice(0, semicolon)).trim().toLowerCase();
  const params = parseParams(semicolon < 0 ? '' : value.slice(semicolon));
  if (eventPackage !== 'refer' || !params) return false;
  const id = params.get('id');
  return id === undefined || id === String(referCSeq);
}

export type ReferNotify =
  | {
      ok: true;
      state: ReferState;
      /** The target's status; absent when the subscription ended without a final sipfrag. */
      status?: SipfragStatus;
      /** No more NOTIFYs will come (Subscription-State terminated). */
      done: boolean;
    }
  | { ok: false; reason: string };

/**
 * Reads one NOTIFY of a REFER subscription. A subscription terminated without a final status
 * (reason timeout, noresource, rejected...) means the outcome is unknown: reported as failed, so
 * the call goes on with the caller rather than hanging up on a transfer that did not happen.
 */
export function readReferNotify(headers: SipHeaders, body: Buffer | string): ReferNotify {
  const subscription = parseSubscriptionState(headers.get('Subscription-State') ?? '');
  if (!subscription) return { ok: false, reason: 'missing or malformed Subscription-State' };
  const done = subscription.state === 'terminated';
  const contentType = (headers.get('Content-Type') ?? '').split(';')[0]!.trim().toLowerCase();
  const hasBody = (typeof body === 'string' ? body.length : body.byteLength) > 0;
  if (!hasBody) return done ? { ok: true, state: 'failed', done } : { ok: true, state: 'trying', done };
  if (contentType !== 'message/sipfrag') return { ok: false, reason: `unexpected body type ${contentType}` };
  const status = parseSipfrag(body);
  if (!status) return { ok: false, reason: 'malformed sipfrag body' };
  let state = referStateOf(status.status);
  if (done && state === 'trying') state = 'failed';
  return { ok: true, state, status, done };
}

export interface ReferTo extends NameAddr {
  /** The target as a SIP/tel URI; null for other schemes, which we cannot call. */
  target: SipUri | null;
}

/** Parses `Refer-To` (compact `r`); null when malformed. */
export function parseReferTo(value: string): ReferTo | null {
  const address = parseNameAddr(value);
  if (!address) return null;
  return { ...address, target: parseUri(address.uri) };
}

/**
 * Formats `Refer-To`. Always in angle brackets: the URI may carry `?` headers (Replaces) and
 * parameters that would otherwise be read as the header's own (RFC 3515 §2.1).
 */
export function formatReferTo(uri: string, displayName?: string): string {
  const name = displayName ? `"${displayName.replace(/(["\\])/g, '\\$1')}" ` : '';
  return `${name}<${uri}>`;
}
