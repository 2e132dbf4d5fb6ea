/**
 * Why a call ended, between SIP and the product's end reasons: final responses (RFC 3261 §21),
 * the `Reason` header (RFC 3326) and the ISDN Q.850 cause values it carries, mapped as RFC 3398
 * §7.2.4.1 / §8.2.6.1 do between ISUP and SIP.
 *
 * A Q.850 cause says more than the status code, so it wins when present: Chinese carriers
 * answer 480 for both an unanswered and a switched-off phone and tell them apart only by
 * cause 19 / 20, and gateways often send a generic 404 or 503 with the real cause in Reason.
 */
import type { UnansweredOutcome } from '../types';
import { parseParams } from './message';

export interface Reason {
  /** `Q.850` or `SIP` in practice (RFC 3326 §2). */
  protocol: string;
  cause: number;
  text?: string;
}

/** Parses one `Reason` value (`Q.850;cause=17;text="User busy"`); null when malformed. */
export function parseReason(value: string): Reason | null {
  const semicolon = value.indexOf(';');
  if (semicolon <= 0) return null;
  const protocol = value.slice(0, semicolon).trim();
  const params = parseParams(value.slice(semicolon));
  const causeText = params?.get('cause');
  if (!params || !/^[A-Za-z0-9.\-_]+$/.test(protocol) || !causeText || !/^\d{1,3}$/.test(causeText))
    return null;
  const reason: Reason = { protocol, cause: Number(causeText) };
  const text = params.get('text');
  if (text) reason.text = text;
  return reason;
}

export function formatReason(reason: Reason): string {
  const text = reason.text === undefined ? '' : `;text="${reason.text.replace(/(["\\])/g, '\\$1')}"`;
  return `${reason.protocol};cause=${reason.cause}${text}`;
}

/**
 * Status codes that name an outcome; every other failure is 'failed'. 487 means the INVITE was
 * cancelled before anyone answered: when we cancelled it ourselves the UA reports that with
 * `outcomeOfLocalEnd`, so a 487 seen here came from a ring timer in the network.
 */
const STATUS_OUTCOMES = new Map<number, UnansweredOutcome>([
  [486, 'busy'],
  [600, 'busy'],
  [408, 'no_answer'],
  [480, 'no_answer'],
  [487, 'no_answer'],
  // 空号: carriers answer 404 or 604; 484 is an incomplete (too short) number, 410 a number no longer in service.
  [404, 'vacant'],
  [604, 'vacant'],
  [484, 'vacant'],
  [410, 'vacant'],
  [603, 'rejected'],
  // The callee refuses calls without a caller ID (RFC 5079).
  [433, 'rejected'],
]);

/**
 * Q.850 causes that name an outcome. 16 (normal clearing), 31 (normal, unspecified) and 127
 * (interworking) say nothing about why a call failed, so the status code decides; so does any
 * other cause of the "normal event" class (1-31). Causes from 32 up report a network or
 * service problem: 'failed'.
 */
const Q850_OUTCOMES = new Map<number, UnansweredOutcome>([
  [1, 'vacant'], // Unallocated (unassigned) number
  [2, 'vacant'], // No route to specified transit network
  [3, 'vacant'], // No route to destination
  [22, 'vacant'], // Number changed
  [28, 'vacant'], // Invalid number format (address incomplete)
  [17, 'busy'], // User busy
  [18, 'no_answer'], // No user responding
  [19, 'no_answer'], // No answer from user (user alerted)
  [20, 'powered_off'], // Subscriber absent: 关机 or out of coverage on Chinese mobile networks
  [21, 'rejected'], // Call rejected
  [27, 'failed'], // Destination out of order
  [29, 'failed'], // Facility rejected
]);

const Q850_NAMES = new Map<number, string>([
  [1, 'Unallocated number'],
  [3, 'No route to destination'],
  [16, 'Normal call clearing'],
  [17, 'User busy'],
  [18, 'No user responding'],
  [19, 'No answer from user'],
  [20, 'Subscriber absent'],
  [21, 'Call rejected'],
  [22, 'Number changed'],
  [27, 'Destination out of order'],
  [28, 'Invalid number format'],
  [31, 'Normal, unspecified'],
  [34, 'No circuit/channel available'],
  [38, 'Network out of order'],
  [41, 'Temporary failure'],
  [42, 'Switching equipment congestion'],
  [102, 'Recovery on timer expiry'],
]);

/** The outcome a Q.850 cause names, or undefined when it leaves the decision to the status code. */
export function outcomeOfQ850(cause: number): UnansweredOutcome | undefined {
  const known = Q850_OUTCOMES.get(cause);
  if (known) return known;
  if (cause === 127 || cause < 32) return undefined;
  return 'failed';
}

export function outcomeOfStatus(status: number): UnansweredOutcome {
  return STATUS_OUTCOMES.get(status) ?? 'failed';
}

export interface CallFailure {
  outcome: UnansweredOutcome;
  /** Shown with the call (Chinese framing, the far end's own words kept for the operator). */
  detail: string;
}

/** Remote text is stored and shown: keep it printable and short. */
const clean = (text: string) =>
  [...text]
    .map((char) => (char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f ? ' ' : char))
    .join('')
    .trim()
    .slice(0, 80);

/**
 * The outcome of an outbound INVITE that ended with a final non-2xx response. `reasons` are
 * the response's `Reason` header values: a Q.850 cause wins, then a SIP cause (a B2BUA relaying
 * the status it got), then the status code itself.
 */
export function outcomeOfFinalResponse(
  status: number,
  reasonPhrase: string,
  reasons: readonly string[] = [],
): CallFailure {
  const parsed = reasons.map(parseReason).filter((reason): reason is Reason => reason !== null);
  const q850 = parsed.find((reason) => reason.protocol.toUpperCase() === 'Q.850');
  const sip = parsed.find((reason) => reason.protocol.toUpperCase() === 'SIP' && reason.cause >= 300);
  let detail = `对端返回 ${status} ${clean(reasonPhrase)}`.trimEnd();
  if (q850) {
    const name = clean(q850.text ?? Q850_NAMES.get(q850.cause) ?? '');
    detail += `（Q.850 原因 ${q850.cause}${name ? ` ${name}` : ''}）`;
  } else if (sip) {
    detail += `（原始状态 SIP ${sip.cause}）`;
  }
  const outcome =
    (q850 && outcomeOfQ850(q850.cause)) ?? (sip ? outcomeOfStatus(sip.cause) : outcomeOfStatus(status));
  return { outcome, detail };
}

/** Ends of an outbound call attempt that no final response explains. */
export type LocalEnd =
  /** We gave up ringing after the request's ring timeout and sent CANCEL. */
  | 'ring_timeout'
  /** The attempt was aborted (task paused, shutdown) and we sent CANCEL. */
  | 'cancelled'
  /** No response at all (Timer B): the trunk is unreachable. */
  | 'no_response'
  | 'transport_error'
  /** 401/407 again after answering a challenge: wrong trunk credentials. */
  | 'auth_failed'
  /** The far end answered with SDP we cannot use. */
  | 'media_refused';

const LOCAL_ENDS: Record<LocalEnd, CallFailure> = {
  ring_timeout: { outcome: 'no_answer', detail: '振铃超时未接听' },
  cancelled: { outcome: 'failed', detail: '呼叫已取消' },
  no_response: { outcome: 'failed', detail: '线路无响应（SIP 请求超时）' },
  transport_error: { outcome: 'failed', detail: '无法连接线路（网络错误）' },
  auth_failed: { outcome: 'failed', detail: '线路鉴权失败，请检查中继的用户名和密码' },
  media_refused: { outcome: 'failed', detail: '对端媒体协商失败（编解码不匹配）' },
};

export function outcomeOfLocalEnd(end: LocalEnd): CallFailure {
  return LOCAL_ENDS[end];
}

// ---------------------------------------------------------------------------------------------
// What we send.

export interface Refusal {
  status: number;
  reasonPhrase: string;
  /** The `Reason` header value, so a carrier relaying to ISUP plays the right tone (RFC 3398). */
  reason: string;
}

/**
 * The final response that refuses an inbound call (`InboundOffer.reject`). `no_capacity` is this
 * worker's own limit (no RTP port left): 503, which a dispatcher in front retries on another worker.
 */
export function refusalFor(cause: 'busy' | 'unavailable' | 'no_capacity'): Refusal {
  if (cause === 'no_capacity') {
    return {
      status: 503,
      reasonPhrase: 'Service Unavailable',
      reason: formatReason({ protocol: 'Q.850', cause: 34, text: 'No circuit/channel available' }),
    };
  }
  return cause === 'busy'
    ? {
        status: 486,
        reasonPhrase: 'Busy Here',
        reason: formatReason({ protocol: 'Q.850', cause: 17, text: 'User busy' }),
      }
    : {
        status: 480,
        reasonPhrase: 'Temporarily Unavailable',
        reason: formatReason({ protocol: 'Q.850', cause: 18, text: 'No user responding' }),
      };
}

export type HangupCause =
  /** We end an answered call (done, caller opted out, transferred, max duration). */
  | 'normal'
  /** CANCEL after the ring timeout: the network records an unanswered call, not a caller abandon. */
  | 'ring_timeout'
  /** CANCEL because the attempt was aborted. */
  | 'cancelled'
  /** No RTP from the far end for too long. */
  | 'media_timeout'
  /** The session timer ran out without a refresh (RFC 4028 §10). */
  | 'session_expired'
  /** We cannot go on (worker shutting down, internal error). */
  | 'failure';

const HANGUP_REASONS: Record<HangupCause, Reason> = {
  normal: { protocol: 'Q.850', cause: 16, text: 'Normal call clearing' },
  ring_timeout: { protocol: 'Q.850', cause: 19, text: 'No answer from user' },
  cancelled: { protocol: 'Q.850', cause: 16, text: 'Normal call clearing' },
  media_timeout: { protocol: 'Q.850', cause: 41, text: 'RTP timeout' },
  session_expired: { protocol: 'Q.850', cause: 102, text: 'Session timer expired' },
  failure: { protocol: 'Q.850', cause: 41, text: 'Temporary failure' },
};

/** The `Reason` header value for a BYE or CANCEL we send (RFC 3326). */
export function hangupReason(cause: HangupCause): string {
  return formatReason(HANGUP_REASONS[cause]);
}
