/**
 * DTMF carried in SIP INFO requests (legacy INFO usage, RFC 6086 §2 / RFC 2976), as PBXes and
 * some carriers send it when telephone-event (RFC 4733) was not negotiated:
 *
 * - `application/dtmf-relay` (Cisco's convention): `Signal=5\r\nDuration=160\r\n`.
 * - `application/dtmf`: the digit alone, `5`.
 *
 * Some gateways write the RFC 4733 event code instead of the character (`Signal=10` for `*`,
 * 11 for `#`, 12-15 for A-D), so codes are accepted too.
 */

export type DtmfInfo =
  | { ok: true; digit: string /** As sent; null when the body gives none. */; durationMs: number | null }
  /** `unsupported_type`: answer 415 with `Accept`; `malformed`: answer 400. */
  | { ok: false; reason: 'unsupported_type' | 'malformed' };

export const DTMF_INFO_TYPES = ['application/dtmf-relay', 'application/dtmf'] as const;

const EVENT_CODES = '0123456789*#ABCD';

/** A digit from its character or its RFC 4733 event code; null when neither. */
function toDigit(text: string): string | null {
  const value = text.trim().toUpperCase();
  if (value.length === 1 && EVENT_CODES.includes(value)) return value;
  if (/^\d{1,2}$/.test(value) && Number(value) < EVENT_CODES.length) return EVENT_CODES[Number(value)]!;
  return null;
}

/** Reads `Name=value` lines, names compared case-insensitively. */
function readFields(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const equals = line.indexOf('=');
    if (equals > 0) fields.set(line.slice(0, equals).trim().toLowerCase(), line.slice(equals + 1).trim());
  }
  return fields;
}

export function parseDtmfInfo(contentType: string | undefined, body: Buffer | string): DtmfInfo {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (!(DTMF_INFO_TYPES as readonly string[]).includes(type))
    return { ok: false, reason: 'unsupported_type' };
  const text = (typeof body === 'string' ? body : body.toString('utf8')).trim();
  // Both forms are seen under both types, so each type accepts either.
  const fields = readFields(text);
  const signal = fields.get('signal') ?? (fields.size === 0 ? text : undefined);
  const digit = signal === undefined ? null : toDigit(signal);
  if (digit === null) return { ok: false, reason: 'malformed' };
  const durationText = fields.get('duration');
  const duration = durationText !== undefined && /^\d{1,6}$/.test(durationText) ? Number(durationText) : null;
  return { ok: true, digit, durationMs: duration };
}

/** An INFO body sending one digit, for a far end that has no telephone-event. */
export function formatDtmfRelay(digit: string, durationMs = 160): { contentType: string; body: string } {
  const value = toDigit(digit);
  if (value === null || digit.trim().length !== 1) throw new Error(`not a DTMF digit: ${digit}`);
  return {
    contentType: 'application/dtmf-relay',
    body: `Signal=${value}\r\nDuration=${Math.round(durationMs)}\r\n`,
  };
}
