/**
 * Session timers (RFC 4028): the header grammars and the decisions of each side. A dialog whose
 * BYE was lost would otherwise hold its media port and its slot of the trunk's concurrency cap
 * forever; with a timer one side refreshes at half the interval and the other ends the call when
 * no refresh comes.
 *
 * Decisions only: the dialog layer sets the timers (on its injected clock) and sends the
 * re-INVITE / UPDATE refreshes and the BYE.
 */
import { type SipHeaders, splitOutside } from './message';

/** RFC 4028 §4: no interval may go below 90 s. */
export const MIN_SE_FLOOR = 90;
/** RFC 4028 §4 recommends 30 minutes. */
export const DEFAULT_SESSION_INTERVAL = 1800;

export type Refresher = 'uac' | 'uas';

export interface SessionExpires {
  /** Seconds. */
  interval: number;
  refresher?: Refresher;
}

const DELTA_SECONDS = /^\d{1,10}$/;

/** `Session-Expires: 1800;refresher=uac` (compact form `x`); null when malformed. */
export function parseSessionExpires(value: string): SessionExpires | null {
  const [first, ...params] = splitOutside(value, ';').map((part) => part.trim());
  if (!first || !DELTA_SECONDS.test(first)) return null;
  const result: SessionExpires = { interval: Number(first) };
  for (const param of params) {
    const [name, paramValue] = param.split('=').map((part) => part.trim().toLowerCase());
    if (name === 'refresher') {
      if (paramValue !== 'uac' && paramValue !== 'uas') return null;
      result.refresher = paramValue;
    }
  }
  return result;
}

export function formatSessionExpires(value: SessionExpires): string {
  return value.refresher ? `${value.interval};refresher=${value.refresher}` : String(value.interval);
}

/** `Min-SE: 90` (extension parameters ignored); null when malformed. */
export function parseMinSE(value: string): number | null {
  const first = splitOutside(value, ';')[0]?.trim() ?? '';
  return DELTA_SECONDS.test(first) ? Number(first) : null;
}

const hasOption = (headers: SipHeaders, header: 'Supported' | 'Require', option: string) =>
  headers
    .getAll(header)
    .flatMap((value) => value.split(','))
    .some((token) => token.trim().toLowerCase() === option);

export interface SessionTimerConfig {
  /** The interval we ask for and, as UAS, the longest we accept (seconds). */
  interval?: number;
  /** The shortest interval we accept (seconds), never below 90. */
  minSE?: number;
  /** As UAS, start a timer even when the caller asked for none (we then refresh). */
  insertWhenAbsent?: boolean;
}

function resolveConfig(config: SessionTimerConfig) {
  const minSE = Math.max(MIN_SE_FLOOR, config.minSE ?? MIN_SE_FLOOR);
  return {
    interval: Math.max(minSE, config.interval ?? DEFAULT_SESSION_INTERVAL),
    minSE,
    insertWhenAbsent: config.insertWhenAbsent ?? true,
  };
}

/** A running session timer, in the dialog's terms. */
export interface ActiveSessionTimer {
  /** Seconds. */
  interval: number;
  /** Who sends the refreshes. */
  refresher: 'local' | 'remote';
  /** When the refresh is due, measured from the 2xx: half the interval (§10). Null when the far end refreshes. */
  refreshAfterMs: number | null;
  /**
   * When to give up and send BYE if no refresh succeeded: the interval less min(32 s, interval/3)
   * (§10), so the BYE arrives before the far end tears the session down itself.
   */
  expireAfterMs: number;
}

function activeTimer(interval: number, refresher: 'local' | 'remote'): ActiveSessionTimer {
  return {
    interval,
    refresher,
    refreshAfterMs: refresher === 'local' ? (interval * 1000) / 2 : null,
    expireAfterMs: (interval - Math.min(32, interval / 3)) * 1000,
  };
}

export type UasSessionTimerDecision =
  /** Answer 422 Session Interval Too Small with these headers (§9). */
  | { accept: false; status: 422; headers: [string, string][] }
  /** Put `headers` on the 2xx; `timer` is null when no session timer runs. */
  | { accept: true; timer: ActiveSessionTimer | null; headers: [string, string][] };

/**
 * We are the UAS of an INVITE, re-INVITE or UPDATE (RFC 4028 §9). The refresher the caller
 * named is kept (the RFC requires it); without one the caller refreshes when it supports timers
 * and we refresh otherwise, because a caller without the extension never will.
 */
export function negotiateAsUas(
  request: SipHeaders,
  config: SessionTimerConfig = {},
): UasSessionTimerDecision {
  const ours = resolveConfig(config);
  const callerSupports = hasOption(request, 'Supported', 'timer') || hasOption(request, 'Require', 'timer');
  const seText = request.get('Session-Expires');
  const minSEText = request.get('Min-SE');
  const requested = seText === undefined ? null : parseSessionExpires(seText);
  const requestMinSE = minSEText === undefined ? null : parseMinSE(minSEText);
  const floor = Math.max(ours.minSE, requestMinSE ?? 0);

  if (requested) {
    if (requested.interval < ours.minSE) {
      return { accept: false, status: 422, headers: [['Min-SE', String(ours.minSE)]] };
    }
    // We may shorten a long interval, never below the caller's Min-SE (§9).
    const interval = Math.max(floor, Math.min(requested.interval, ours.interval));
    const refresher: Refresher = requested.refresher ?? (callerSupports ? 'uac' : 'uas');
    return accepted(interval, refresher, callerSupports);
  }
  if (!ours.insertWhenAbsent) return { accept: true, timer: null, headers: [] };
  const interval = Math.max(floor, ours.interval);
  return accepted(interval, callerSupports ? 'uac' : 'uas', callerSupports);
}

function accepted(interval: number, refresher: Refresher, callerSupports: boolean): UasSessionTimerDecision {
  const headers: [string, string][] = [['Session-Expires', formatSessionExpires({ interval, refresher })]];
  // Require: timer tells a caller that supports the extension it is now bound to refresh or expect refreshes (§9).
  if (callerSupports) headers.push(['Require', 'timer']);
  return { accept: true, timer: activeTimer(interval, refresher === 'uas' ? 'local' : 'remote'), headers };
}

/** What we ask for as UAC: kept per INVITE attempt so a 422 can raise it. */
export interface UacSessionTimerRequest {
  interval: number;
  minSE: number;
}

export function initialUacRequest(config: SessionTimerConfig = {}): UacSessionTimerRequest {
  const { interval, minSE } = resolveConfig(config);
  return { interval, minSE };
}

/**
 * Headers for an INVITE (or a refresh) we send. A refresh names `refresher: 'uac'` because we,
 * the sender, keep refreshing (§7.4); an initial INVITE leaves the choice to the UAS.
 */
export function uacRequestHeaders(
  request: UacSessionTimerRequest,
  refresher?: Refresher,
): [string, string][] {
  return [
    ['Session-Expires', formatSessionExpires({ interval: request.interval, refresher })],
    ['Min-SE', String(request.minSE)],
    ['Supported', 'timer'],
  ];
}

/**
 * After a 422 (§7.3): retry with the far end's Min-SE as both our interval floor and our Min-SE.
 * Null when the 422 carries no usable Min-SE or asks for nothing more than we sent (retrying
 * would loop): the call then fails.
 */
export function retryAfter422(
  previous: UacSessionTimerRequest,
  response: SipHeaders,
): UacSessionTimerRequest | null {
  const text = response.get('Min-SE');
  const minSE = text === undefined ? null : parseMinSE(text);
  if (minSE === null || minSE <= previous.interval) return null;
  return { interval: minSE, minSE };
}

/**
 * Reads the 2xx to an INVITE, re-INVITE or UPDATE we sent (§7.2). No Session-Expires: no timer.
 * Without a refresher parameter the UAS does not support timers (a proxy added the header), so
 * we refresh.
 */
export function timerFromUacResponse(response: SipHeaders): ActiveSessionTimer | null {
  const text = response.get('Session-Expires');
  const value = text === undefined ? null : parseSessionExpires(text);
  if (!value) return null;
  const interval = Math.max(MIN_SE_FLOOR, value.interval);
  return activeTimer(interval, value.refresher === 'uas' ? 'remote' : 'local');
}
