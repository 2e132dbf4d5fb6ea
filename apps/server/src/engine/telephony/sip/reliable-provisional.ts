/**
 * Reliable provisional responses (RFC 3262): the `100rel` option tag, RSeq numbering and the
 * RAck of PRACK. Carriers that play early media in a 183 often require 100rel, and an INVITE
 * carrying `Require: 100rel` that we cannot honour must be refused with 420 (RFC 3261 §8.2.2.3).
 */
import type { SipHeaders } from './message';

const MAX_SEQ = 2 ** 32 - 1;
const SEQ = /^\d{1,10}$/;
const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

const optionTags = (headers: SipHeaders, header: 'Require' | 'Supported' | 'Proxy-Require') =>
  headers
    .getAll(header)
    .flatMap((value) => value.split(','))
    .map((tag) => tag.trim().toLowerCase())
    .filter((tag) => tag !== '');

/** The request or response insists on reliable provisional responses. */
export function requires100rel(headers: SipHeaders): boolean {
  return optionTags(headers, 'Require').includes('100rel');
}

/** The peer can do PRACK (it listed 100rel in Supported or Require). */
export function supports100rel(headers: SipHeaders): boolean {
  return requires100rel(headers) || optionTags(headers, 'Supported').includes('100rel');
}

/**
 * Option tags of `Require` (and `Proxy-Require`, which a UA receiving it also has to honour) that
 * we do not know: answer 420 Bad Extension listing them in `Unsupported`.
 */
export function unsupportedRequirements(headers: SipHeaders, known: readonly string[]): string[] {
  const ours = new Set(known.map((tag) => tag.toLowerCase()));
  const tags = [...optionTags(headers, 'Require'), ...optionTags(headers, 'Proxy-Require')];
  return [...new Set(tags)].filter((tag) => !ours.has(tag));
}

export type ProvisionalMode = 'reliable' | 'unreliable';

/**
 * As UAS, how to send 18x: reliably when the caller requires it, or when it supports it and we
 * want to (a 183 with SDP, whose answer must not be lost).
 */
export function provisionalMode(request: SipHeaders, preferReliable: boolean): ProvisionalMode {
  if (requires100rel(request)) return 'reliable';
  return preferReliable && supports100rel(request) ? 'reliable' : 'unreliable';
}

/** `RSeq: 988789`; null when malformed or zero. */
export function parseRSeq(value: string): number | null {
  const text = value.trim();
  if (!SEQ.test(text)) return null;
  const rseq = Number(text);
  return rseq >= 1 && rseq <= MAX_SEQ ? rseq : null;
}

/**
 * RSeq numbers of one INVITE's reliable provisionals (UAS side). The first is random in
 * [1, 2^31 - 1] (§3), then each response takes the next; `random` is injectable for tests.
 */
export class RSeqCounter {
  private last: number;

  constructor(random: () => number = Math.random) {
    this.last = Math.floor(random() * (2 ** 31 - 1));
  }

  next(): number {
    this.last = this.last >= MAX_SEQ ? 1 : this.last + 1;
    return this.last;
  }
}

export interface RAck {
  rseq: number;
  cseq: number;
  method: string;
}

/** `RAck: 776656 1 INVITE`; null when malformed. */
export function parseRAck(value: string): RAck | null {
  const parts = value.trim().split(/[ \t]+/);
  if (parts.length !== 3) return null;
  const [rseqText, cseqText, method] = parts as [string, string, string];
  const rseq = parseRSeq(rseqText);
  if (rseq === null || !SEQ.test(cseqText) || Number(cseqText) > MAX_SEQ || !TOKEN.test(method)) return null;
  return { rseq, cseq: Number(cseqText), method: method.toUpperCase() };
}

export function formatRAck(rack: RAck): string {
  return `${rack.rseq} ${rack.cseq} ${rack.method}`;
}

/**
 * Whether a PRACK acknowledges a reliable provisional we sent (§3): same RSeq, and the CSeq
 * number and method of the INVITE it answered. A PRACK matching nothing gets 481.
 */
export function rackMatches(rack: RAck, sent: { rseq: number; cseq: number; method: string }): boolean {
  return rack.rseq === sent.rseq && rack.cseq === sent.cseq && rack.method === sent.method.toUpperCase();
}

export type ProvisionalVerdict =
  /** Process it and send PRACK. */
  | 'new'
  /** A retransmission (our PRACK is on its way or was lost; its own transaction resends it): ignore. */
  | 'duplicate'
  /** Out of order (§4): neither process nor acknowledge it; the UAS retransmits. */
  | 'out_of_order';

/**
 * UAC side: which reliable provisionals of one INVITE, within one early dialog (a forked INVITE
 * has one tracker per To tag), to process. The first sets the sequence; each next one must be
 * exactly one higher.
 */
export class ReliableProvisionalTracker {
  private last: number | null = null;

  receive(rseq: number): ProvisionalVerdict {
    if (this.last === null || rseq === this.last + 1) {
      this.last = rseq;
      return 'new';
    }
    return rseq <= this.last ? 'duplicate' : 'out_of_order';
  }

  /** The RAck value for the PRACK of a provisional this tracker accepted. */
  static rackFor(rseq: number, invite: { cseq: number; method?: string }): string {
    return formatRAck({ rseq, cseq: invite.cseq, method: invite.method ?? 'INVITE' });
  }
}
