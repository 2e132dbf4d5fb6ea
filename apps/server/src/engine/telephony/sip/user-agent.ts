/**
 * The SIP user agent core (RFC 3261 §8, §12–§15 with RFC 6026): INVITE sessions as caller and
 * callee, in-dialog requests, CANCEL, OPTIONS, and dispatch of incoming requests to dialogs.
 *
 * It sits on the transaction layer through `SipTransactionPort` and treats session descriptions
 * as opaque text: offer/answer is the call leg's business (sdp.ts), except for the re-offers the
 * session makes itself (hold, unhold), which start from the description its owner gave it. Every
 * timer goes through the port's timers, so a test runs a whole call on a virtual clock.
 *
 * Timing rules that live here rather than in the transactions (RFC 6026): the callee's 2xx is
 * retransmitted by this core (T1 doubling up to T2) until the ACK arrives or 64·T1 pass (then the
 * call is ended with BYE); the caller ACKs every 2xx it sees, retransmissions included.
 *
 * Extensions: session timers (RFC 4028) both ways, reliable provisional responses (RFC 3262,
 * PRACK) both ways, blind transfer with REFER and its NOTIFYs (RFC 3515). A request requiring any
 * other extension gets 420.
 */
import {
  buildResponse,
  createRequest,
  cseqOf,
  Dialog,
  dialogKey,
  incomingDialogKey,
  newCallId,
  newTag,
  type SipDestination,
  type SipTransportName,
  tagOf,
  uriOf,
} from './dialog';
import type { DigestAuthenticator } from './digest';
import {
  formatUri,
  parseNameAddr,
  parseUri,
  type SipHeaders,
  type SipRequest,
  type SipResponse,
} from './message';
import {
  parseRAck,
  parseRSeq,
  provisionalMode,
  ReliableProvisionalTracker,
  RSeqCounter,
  rackMatches,
  requires100rel,
  unsupportedRequirements,
} from './reliable-provisional';
import { applyAnswer, createReoffer, type LocalDescription, type NegotiatedMedia } from './sdp';
import {
  type ActiveSessionTimer,
  initialUacRequest,
  negotiateAsUas,
  retryAfter422,
  type SessionTimerConfig,
  timerFromUacResponse,
  type UacSessionTimerRequest,
  type UasSessionTimerDecision,
  uacRequestHeaders,
} from './session-timer';
import { formatReferTo, isReferEvent, type ReferNotify, readReferNotify } from './sipfrag';

export interface SipTimerPort {
  now(): number;
  /** Calls `fn` after `ms`; the result cancels it. */
  set(ms: number, fn: () => void): () => void;
}

export interface RequestSource {
  protocol: SipTransportName;
  address: string;
  port: number;
}

export type ClientFailure = 'timeout' | 'transport';

export interface ClientTransactionHandlers {
  onResponse(response: SipResponse): void;
  onFailure(kind: ClientFailure): void;
}

export interface ClientTransactionHandle {
  /** The request as sent, with the Via the transaction layer put on top. */
  readonly request: SipRequest;
  /** Sends a CANCEL for this INVITE (§9.1): same Request-URI, Call-ID, From, To, CSeq number and top Via. */
  cancel(headers?: Iterable<readonly [string, string]>): void;
}

export interface ServerTransactionHandle {
  readonly request: SipRequest;
  respond(response: SipResponse): void;
  /** Set by the UA: the transaction ended without the exchange completing (e.g. never answered). */
  onFailure?: (reason: 'no-ack' | 'no-response' | 'transport') => void;
}

/** What the user agent needs from the transaction and transport layers below it. */
export interface SipTransactionPort {
  readonly timers: SipTimerPort;
  /** The address peers reach us at (the external address behind NAT), for Contact headers. */
  readonly contactHost: string;
  readonly contactPort: number;
  readonly t1: number;
  readonly t2: number;
  /** Starts a client transaction; the layer puts its Via on top of the request. */
  request(
    request: SipRequest,
    destination: SipDestination,
    handlers: ClientTransactionHandlers,
  ): ClientTransactionHandle;
  /** ACK for a 2xx travels outside any transaction (§13.2.2.4), with a Via of its own. */
  sendAck(ack: SipRequest, destination: SipDestination): void;
  /** New requests (not retransmissions) and ACKs for 2xx; `transaction` is null for ACK. */
  onRequest(
    handler: (
      request: SipRequest,
      transaction: ServerTransactionHandle | null,
      source: RequestSource,
    ) => void,
  ): void;
  /** The INVITE server transaction a CANCEL names (§9.2), if it is still there. */
  findInviteTransaction(cancel: SipRequest): ServerTransactionHandle | undefined;
  /** 2xx responses to INVITE whose client transaction is gone (after Timer M). */
  onStrayResponse?(handler: (response: SipResponse) => void): void;
}

export const ALLOWED_METHODS = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, REFER, NOTIFY, PRACK';

/** A blind transfer may ring a person for a while before the far end reports the outcome. */
const REFER_TIMEOUT_MS = 90_000;
/**
 * How long NOTIFYs are still taken after the far end hung up a call whose REFER it accepted:
 * many transferees end the original call at once, and the subscription outlives it (RFC 5057 §5).
 */
const REFER_AFTER_BYE_MS = 5_000;
/** Final responses to REFER that mean the line does not do transfers at all. */
const REFER_REFUSED = new Set([403, 405, 501, 603]);

/** Our dialog URI with `user` in place of ours (the number a transfer's target is shown), when given. */
function referrer(local: string | undefined, user: string | undefined): string | undefined {
  if (!local || !user) return local;
  const uri = parseUri(local);
  return uri ? formatUri({ ...uri, user, params: new Map(), headers: new Map() }) : local;
}

/** Whether a comma-separated header (Allow, Supported, Require) lists `token`. */
const lists = (headers: SipHeaders, name: string, token: string) =>
  headers
    .getAll(name)
    .flatMap((value) => value.split(','))
    .some((item) => item.trim().toLowerCase() === token);

/** The Unsupported header of a 420 when `request` requires an option tag we lack, or null. */
function badExtension(request: SipRequest, known: readonly string[]): [string, string][] | null {
  const unsupported = unsupportedRequirements(request.headers, known);
  return unsupported.length > 0 ? [['Unsupported', unsupported.join(', ')]] : null;
}

export type EndedBy = 'local' | 'remote';

export interface SessionEnd {
  by: EndedBy;
  /** The BYE (or the failure) that ended it: for the call record. */
  reason: 'bye' | 'ack_timeout' | 'request_timeout' | 'session_expired' | 'transport';
  at: number;
  /** A Reason header the far end put on its BYE, if any. */
  reasonHeader?: string;
}

/** What a confirmed call's owner (the SIP call leg) is told and asked by the session. */
export interface SessionHandlers {
  /** A re-INVITE or UPDATE offer: return the answer, or null to refuse it (488). */
  onOffer?(sdp: string, method: 'INVITE' | 'UPDATE'): string | null;
  /** The answer to an offer of ours (hold, unhold, a refresh) settled the media anew. */
  onMedia?(negotiated: NegotiatedMedia): void;
  /** An in-dialog request the core does not handle itself (INFO, NOTIFY). Return the status to answer. */
  onRequest?(request: SipRequest): number;
  onEnded?(end: SessionEnd): void;
}

export interface ReferOutcome {
  /** The far end reported that the target answered (or accepted the REFER and hung up on us). */
  ok: boolean;
  /** For the call record, in Chinese. */
  detail: string;
  /** The REFER's final status when it was refused, else the target's last reported status. */
  status?: number;
  /**
   * The far end answered the REFER itself with a final non-2xx: it would not transfer, and the
   * target was never called (unlike a REFER taken whose NOTIFY reports the target busy).
   */
  refused?: boolean;
  /** No outcome came before the timeout (the target rang on, or the line never said). */
  timedOut?: boolean;
}

export type HoldOutcome =
  | { ok: true; negotiated: NegotiatedMedia }
  | { ok: false; status?: number; detail: string };

interface ReferWatch {
  /** CSeq of the REFER: NOTIFYs name it in their Event id. */
  cseq: number;
  /** A 2xx or a NOTIFY came: the far end is working on it. */
  accepted: boolean;
  settle(outcome: ReferOutcome): void;
  /** Replaces the overall timeout once the call ended under an accepted transfer. */
  restartTimeout(ms: number, outcome: ReferOutcome): void;
}

type SessionState = 'confirmed' | 'ended';

/**
 * A confirmed INVITE dialog (the "call") with the requests either side may send inside it.
 * Created by `SipUserAgent` when a call is answered, outbound or inbound.
 */
export class InviteSession {
  state: SessionState = 'confirmed';
  handlers: SessionHandlers = {};
  /** Our current session description (the last offer or answer we sent). */
  localSdp: string;
  remoteSdp: string;
  /**
   * The same as sdp.ts keeps it, when the owner sets it (and keeps it current after answering
   * re-offers): hold and unhold re-offer from it, and refreshes read their answers with it.
   */
  description: LocalDescription | null = null;
  /** The session timer (RFC 4028) running now; null when the call has none. */
  sessionTimer: ActiveSessionTimer | null = null;
  /** The far end listed UPDATE in Allow: refreshes go as UPDATE without an offer (RFC 4028 §7.4). */
  peerAllowsUpdate = false;
  /** The far end listed `timer` in Supported or Require. */
  peerSupportsTimer = false;
  ended: SessionEnd | null = null;
  readonly whenEnded: Promise<SessionEnd>;
  private resolveEnded!: (end: SessionEnd) => void;
  /** The trunk's credentials from the INVITE: in-dialog requests carry them and answer challenges too. */
  auth: DigestAuthenticator | null = null;
  /**
   * Sends our INVITE's ACK again, for a retransmitted 2xx. A new ACK each time rather than the
   * same bytes: SIPp, like other stacks, takes an identical request for a retransmission of the
   * one before and answers it with the 2xx again; the UAS matches the ACK by dialog and CSeq.
   */
  reAck: (() => void) | null = null;
  /** A re-INVITE or UPDATE of ours waiting for its final response: glare detection (§14.1). */
  private pendingOffer: 'INVITE' | 'UPDATE' | null = null;
  private readonly cleanups = new Set<() => void>();
  /** What we ask for in our INVITEs and UPDATEs; null when session timers are off. */
  private timerRequest: UacSessionTimerRequest | null;
  private cancelTimers: (() => void)[] = [];
  private referWatch: ReferWatch | null = null;

  constructor(
    readonly ua: SipUserAgent,
    readonly dialog: Dialog,
    readonly role: 'uac' | 'uas',
    sdp: { local: string; remote: string },
  ) {
    this.localSdp = sdp.local;
    this.remoteSdp = sdp.remote;
    const timers = ua.sessionTimers;
    this.timerRequest = timers ? initialUacRequest(timers) : null;
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  get callId(): string {
    return this.dialog.callId;
  }

  /** Our media as our last description states it: sendonly while we hold the far end. */
  get onHold(): boolean {
    const direction = this.description?.options.direction;
    return direction === 'sendonly' || direction === 'inactive';
  }

  /** Registers a cancel function run when the session ends (timers of the owner). */
  onCleanup(fn: () => void): void {
    if (this.state === 'ended') fn();
    else this.cleanups.add(fn);
  }

  /** What the far end's INVITE, or its 2xx to ours, says it can do. */
  learnPeer(message: SipRequest | SipResponse): void {
    this.peerAllowsUpdate = lists(message.headers, 'Allow', 'update');
    this.peerSupportsTimer =
      lists(message.headers, 'Supported', 'timer') || lists(message.headers, 'Require', 'timer');
  }

  /**
   * (Re)starts the session timer from a 2xx of an INVITE, re-INVITE or UPDATE: the refresh at
   * half the interval when we refresh, and either way the BYE when the session expires with no
   * successful refresh in between.
   */
  runSessionTimer(timer: ActiveSessionTimer | null): void {
    for (const cancel of this.cancelTimers.splice(0)) cancel();
    this.sessionTimer = timer;
    if (!timer || this.state === 'ended') return;
    const { timers } = this.ua.port;
    if (timer.refreshAfterMs !== null) {
      this.cancelTimers.push(timers.set(timer.refreshAfterMs, () => void this.refreshSession()));
    }
    // The side that refreshes gives up only when the session is truly over: the other side,
    // expecting refreshes, hangs up a little before that (RFC 4028 §10), so only one BYE goes.
    const expireAfterMs = timer.refresher === 'local' ? timer.interval * 1000 : timer.expireAfterMs;
    this.cancelTimers.push(
      timers.set(expireAfterMs, () => {
        if (this.state === 'ended') return;
        // RFC 4028 §10 names no Reason; 408 tells the far end (and its logs) what happened.
        void this.end({ by: 'remote', reason: 'session_expired' }, 'SIP;cause=408;text="Session expired"');
      }),
    );
  }

  /** Ends the call from our side. Resolves when the BYE got its final response (or timed out). */
  async bye(reasonHeader?: string): Promise<void> {
    await this.end({ by: 'local', reason: 'bye' }, reasonHeader);
  }

  private async end(how: Pick<SessionEnd, 'by' | 'reason'>, reasonHeader?: string): Promise<void> {
    if (this.state === 'ended') return;
    this.finish({ ...how, at: this.ua.now() });
    const headers: [string, string][] = reasonHeader ? [['Reason', reasonHeader]] : [];
    await this.send('BYE', { headers }).catch(() => undefined);
  }

  /**
   * Sends a request in this dialog and resolves with its final response; a 481/408 or a timeout
   * means the dialog is gone (§12.2.1.2), and the call ends.
   */
  send(
    method: string,
    options: { headers?: Iterable<readonly [string, string]>; body?: Buffer; contentType?: string } = {},
    challenged = false,
  ): Promise<SipResponse> {
    const { request, destination } = this.dialog.createRequest(method, options);
    if (method === 'INVITE' || method === 'UPDATE') {
      request.headers.append('Contact', this.ua.contact());
      for (const [name, value] of this.timerHeaders()) request.headers.append(name, value);
    }
    for (const header of this.auth?.authorize({ method, uri: request.uri, body: request.body }) ?? []) {
      request.headers.append(header.name, header.value);
    }
    return this.transmit(request, destination, {
      retry: challenged ? undefined : () => this.send(method, options, true),
    });
  }

  /**
   * Sends a request built in this dialog. `onFinal` sees the final response before anything
   * else in the dialog can happen; `retry` sends it again once when a 401/407 can be answered.
   */
  private transmit(
    request: SipRequest,
    destination: SipDestination,
    handling: { onFinal?: (response: SipResponse) => void; retry?: () => Promise<SipResponse> } = {},
  ): Promise<SipResponse> {
    const method = request.method;
    return new Promise((resolve, reject) => {
      this.ua.port.request(request, destination, {
        onResponse: (response) => {
          if (response.status < 200) return;
          if (handling.retry && this.acceptChallenge(response)) {
            // A proxy that challenges BYE would otherwise keep the call up (and billed) on its side.
            resolve(handling.retry());
            return;
          }
          handling.onFinal?.(response);
          if ((response.status === 481 || response.status === 408) && method !== 'BYE') {
            this.finish({ by: 'remote', reason: 'request_timeout', at: this.ua.now() });
          }
          if (method === 'INVITE' && response.status < 300) {
            // ACK the re-INVITE's 2xx, every copy of it.
            this.ackReinvite(response);
          }
          resolve(response);
        },
        onFailure: (kind) => {
          if (method !== 'BYE') {
            this.finish({
              by: 'remote',
              reason: kind === 'timeout' ? 'request_timeout' : 'transport',
              at: this.ua.now(),
            });
          }
          reject(new Error(`${method} ${kind}`));
        },
      });
    });
  }

  /**
   * Session-timer headers for an INVITE or UPDATE we send in the dialog: every one of them is a
   * refresh (RFC 4028 §7.4), naming whoever refreshes now so that does not change by accident.
   */
  private timerHeaders(): [string, string][] {
    if (!this.timerRequest) return [];
    const { minSE } = this.timerRequest;
    const interval = Math.max(this.sessionTimer?.interval ?? this.timerRequest.interval, minSE);
    const refresher = this.sessionTimer
      ? this.sessionTimer.refresher === 'local'
        ? 'uac'
        : 'uas'
      : undefined;
    return [
      ...uacRequestHeaders({ interval, minSE }, refresher).filter(([name]) => name !== 'Supported'),
      ['Supported', this.ua.supported],
    ];
  }

  /** The 2xx to an INVITE or UPDATE of ours: the session timer from now on (RFC 4028 §7.2). */
  private refreshed(response: SipResponse): void {
    if (!this.timerRequest) return;
    const next = timerFromUacResponse(response.headers);
    // A far end without the extension answers with no Session-Expires, which would turn off the
    // timer we inserted for it; it never knew about that timer, so we keep refreshing it.
    if (!next && !this.peerSupportsTimer && this.sessionTimer?.refresher === 'local') {
      this.runSessionTimer(this.sessionTimer);
      return;
    }
    this.runSessionTimer(next);
  }

  /**
   * Re-offers (hold/unhold, or a session refresh with the same description; null sends an UPDATE
   * without an offer). A 491 means both sides re-offered at once: retry after the random wait of
   * §14.1 (2.1–4 s for the Call-ID's owner, up to 2 s for the other side). A 422 raises our
   * session interval to the far end's Min-SE and retries once (RFC 4028 §7.3).
   */
  async reoffer(sdp: string | null, method: 'INVITE' | 'UPDATE' = 'INVITE'): Promise<SipResponse> {
    let retriedInterval = false;
    for (let attempt = 0; ; attempt++) {
      if (this.state === 'ended') throw new Error('session ended');
      this.pendingOffer = method;
      let response: SipResponse;
      try {
        response = await this.send(
          method,
          sdp === null ? {} : { body: Buffer.from(sdp), contentType: 'application/sdp' },
        );
      } finally {
        this.pendingOffer = null;
      }
      if (response.status >= 200 && response.status < 300) {
        if (sdp !== null) this.localSdp = sdp;
        if (response.body.length > 0) this.remoteSdp = response.body.toString('utf8');
        this.dialog.refreshTarget(response);
        this.refreshed(response);
        return response;
      }
      if (response.status === 422 && this.timerRequest && !retriedInterval) {
        const raised = retryAfter422(this.timerRequest, response.headers);
        if (raised) {
          this.timerRequest = raised;
          retriedInterval = true;
          continue;
        }
      }
      if (response.status !== 491 || attempt >= 3) return response;
      const wait = this.role === 'uac' ? 2100 + Math.random() * 1900 : Math.random() * 2000;
      await new Promise<void>((resolve) => {
        const cancel = this.ua.port.timers.set(wait, resolve);
        this.onCleanup(() => {
          cancel();
          resolve();
        });
      });
    }
  }

  /**
   * A 401/407 to an in-dialog request, answered once with the call's credentials. It is not a
   * retry in §22.2's sense: the request carried cached credentials, so the server may only want
   * a new nonce.
   */
  private acceptChallenge(response: SipResponse): boolean {
    if (!this.auth || (response.status !== 401 && response.status !== 407)) return false;
    const kind = response.status === 401 ? 'www' : 'proxy';
    const values = response.headers.getAll(kind === 'www' ? 'WWW-Authenticate' : 'Proxy-Authenticate');
    return this.auth.onChallenge(kind, values, false).ok;
  }

  /** The refresh we owe as refresher: UPDATE when the far end takes it, else the same offer again. */
  private async refreshSession(): Promise<void> {
    // An offer of ours in flight is a refresh itself; its 2xx restarts the timer.
    if (this.state === 'ended' || this.pendingOffer) return;
    try {
      if (this.peerAllowsUpdate) {
        const response = await this.reoffer(null, 'UPDATE');
        if (response.status < 300) return;
        // It listed UPDATE but refused this one (405, 501, or 488/400 from SBCs that want an
        // offer in it): re-INVITE now and from now on, rather than let the session expire.
        this.peerAllowsUpdate = false;
      }
      const response = await this.reoffer(this.localSdp, 'INVITE');
      if (response.status < 300 && this.description) this.settleMedia(this.description);
    } catch {
      // A timeout, 408 or 481 ended the session already (§12.2.1.2).
    }
  }

  /** Reads the far end's answer to `offer` and hands the result to the owner. */
  private settleMedia(offer: LocalDescription): HoldOutcome {
    const applied = applyAnswer(offer, this.remoteSdp);
    if (!applied.ok) return { ok: false, detail: applied.reason };
    this.handlers.onMedia?.(applied.negotiated);
    return { ok: true, negotiated: applied.negotiated };
  }

  /** Puts the far end on hold: our offer turns sendonly (RFC 3264 §8.4). */
  hold(): Promise<HoldOutcome> {
    return this.setDirection('sendonly');
  }

  unhold(): Promise<HoldOutcome> {
    return this.setDirection('sendrecv');
  }

  private async setDirection(direction: 'sendonly' | 'sendrecv'): Promise<HoldOutcome> {
    if (!this.description) throw new Error('hold needs the session description (InviteSession.description)');
    const offer = createReoffer(this.description, { direction });
    let response: SipResponse;
    try {
      response = await this.reoffer(offer.sdp, 'INVITE');
    } catch {
      return { ok: false, detail: '通话已结束' };
    }
    if (response.status >= 300) {
      return { ok: false, status: response.status, detail: `${response.status} ${response.reason}`.trim() };
    }
    this.description = offer;
    return this.settleMedia(offer);
  }

  /**
   * Blind transfer (RFC 3515): asks the far end to call `target` itself, then follows the
   * NOTIFYs of the implicit subscription until the target answered or the attempt failed.
   * Never rejects; a line without REFER says so in `detail`.
   */
  refer(target: string, options: { timeoutMs?: number; referredBy?: string } = {}): Promise<ReferOutcome> {
    if (this.state === 'ended') return Promise.resolve({ ok: false, detail: '通话已结束，未能转接' });
    if (this.referWatch) return Promise.resolve({ ok: false, detail: '已有一个转接正在进行' });
    const localUri = referrer(uriOf(this.dialog.localAddress), options.referredBy);
    const build = () => {
      const built = this.dialog.createRequest('REFER', {
        headers: [
          ['Refer-To', formatReferTo(target)],
          ...(localUri ? ([['Referred-By', `<${localUri}>`]] as [string, string][]) : []),
          ['Contact', this.ua.contact()],
        ],
      });
      const { request } = built;
      for (const header of this.auth?.authorize({ method: 'REFER', uri: request.uri, body: request.body }) ??
        []) {
        request.headers.append(header.name, header.value);
      }
      return built;
    };
    const { request, destination } = build();
    return new Promise<ReferOutcome>((resolve) => {
      const timers = this.ua.port.timers;
      let cancelTimeout = () => {};
      const watch: ReferWatch = {
        cseq: cseqOf(request)?.seq ?? 0,
        accepted: false,
        settle: (outcome) => {
          if (this.referWatch !== watch) return;
          this.referWatch = null;
          cancelTimeout();
          this.ua.stopLingering(this);
          resolve(outcome);
        },
        restartTimeout: (ms, outcome) => {
          cancelTimeout();
          cancelTimeout = timers.set(ms, () => watch.settle(outcome));
        },
      };
      this.referWatch = watch;
      watch.restartTimeout(options.timeoutMs ?? REFER_TIMEOUT_MS, {
        ok: false,
        timedOut: true,
        detail: '转接超时：线路未报告转接结果',
      });
      const accepted = (response: SipResponse) => {
        // At once, not a promise turn later: a BYE right behind the 202 must find it accepted.
        if (response.status < 300) watch.accepted = true;
      };
      // Answered once with the call's credentials; the NOTIFYs then name the new CSeq.
      const retry = () => {
        const again = build();
        watch.cseq = cseqOf(again.request)?.seq ?? watch.cseq;
        return this.transmit(again.request, again.destination, { onFinal: accepted });
      };
      this.transmit(request, destination, { onFinal: accepted, retry }).then(
        (response) => {
          if (response.status < 300) return;
          watch.settle({
            ok: false,
            status: response.status,
            refused: true,
            detail: REFER_REFUSED.has(response.status)
              ? '线路不支持转接（REFER 被拒绝）'
              : `转接失败：线路拒绝转接（${response.status} ${response.reason}）`,
          });
        },
        () => watch.settle({ ok: false, detail: '转接失败：线路未回复转接请求' }),
      );
    });
  }

  /** A NOTIFY of the REFER we sent (RFC 3515 §2.4.4): the target's call as a sipfrag status line. */
  private onReferNotify(watch: ReferWatch, notify: ReferNotify): void {
    // The NOTIFY can overtake the 202 it follows; either shows the REFER was taken.
    watch.accepted = true;
    if (!notify.ok || notify.state === 'trying') return;
    const status = notify.status;
    const line = status ? `${status.status} ${status.reason}`.trim() : '';
    if (notify.state === 'succeeded') {
      watch.settle({ ok: true, status: status?.status, detail: `转接成功（${line}）` });
    } else {
      watch.settle({
        ok: false,
        status: status?.status,
        detail: status ? `转接目标未接通（${line}）` : '转接失败：线路结束了转接通知，未报告结果',
      });
    }
  }

  private ackReinvite(response: SipResponse) {
    const cseq = cseqOf(response);
    if (!cseq) return;
    const { request, destination } = this.dialog.createRequest('ACK', { cseq: cseq.seq });
    this.ua.port.sendAck(request, destination);
  }

  /** An in-dialog request from the far end. */
  receive(request: SipRequest, transaction: ServerTransactionHandle): void {
    this.answerInDialog(request, transaction);
  }

  /** Returns what it answered, so each branch reads as one statement. */
  private answerInDialog(request: SipRequest, transaction: ServerTransactionHandle): number {
    const respond = (
      status: number,
      reason: string,
      extra: { headers?: [string, string][]; body?: Buffer } = {},
    ): number => {
      transaction.respond(buildResponse(request, status, reason, extra));
      return status;
    };
    const unsupported = badExtension(request, this.ua.extensions);
    if (unsupported) return respond(420, 'Bad Extension', { headers: unsupported });
    if (!this.dialog.acceptRemoteSeq(request)) return respond(500, 'CSeq Out of Order');
    switch (request.method) {
      case 'BYE':
        respond(200, 'OK');
        this.finish({
          by: 'remote',
          reason: 'bye',
          at: this.ua.now(),
          reasonHeader: request.headers.get('Reason'),
        });
        return 200;
      case 'INVITE':
      case 'UPDATE': {
        if (this.pendingOffer) return respond(491, 'Request Pending');
        // Every re-INVITE and UPDATE is a refresh: it renegotiates the timer (RFC 4028 §9).
        const timers = this.ua.sessionTimers;
        const decision = timers ? negotiateAsUas(request.headers, timers) : null;
        if (decision && !decision.accept) {
          return respond(422, 'Session Interval Too Small', { headers: decision.headers });
        }
        this.dialog.refreshTarget(request);
        const headers: [string, string][] = [['Contact', this.ua.contact()]];
        if (decision) headers.push(...decision.headers, ['Supported', this.ua.supported]);
        const restartTimer = () => {
          if (decision?.accept) this.runSessionTimer(decision.timer);
        };
        if (request.body.length === 0) {
          // A refresh without an offer: we offer our current description again (re-INVITE) or
          // just confirm (UPDATE).
          const body = request.method === 'INVITE' ? Buffer.from(this.localSdp) : undefined;
          if (body) headers.push(['Content-Type', 'application/sdp']);
          restartTimer();
          return this.respondReinvite(request, transaction, 200, headers, body);
        }
        const offer = request.body.toString('utf8');
        const answer = this.handlers.onOffer ? this.handlers.onOffer(offer, request.method) : this.localSdp;
        if (answer === null) return respond(488, 'Not Acceptable Here');
        this.remoteSdp = offer;
        this.localSdp = answer;
        restartTimer();
        headers.push(['Content-Type', 'application/sdp']);
        return this.respondReinvite(request, transaction, 200, headers, Buffer.from(answer));
      }
      case 'PRACK':
        // Its reliable provisional was answered long ago (RFC 3262 §3).
        return respond(481, 'Call/Transaction Does Not Exist');
      case 'NOTIFY': {
        const event = request.headers.get('Event') ?? '';
        const watch = this.referWatch;
        if (watch && isReferEvent(event, watch.cseq)) {
          respond(200, 'OK');
          this.onReferNotify(watch, readReferNotify(request.headers, request.body));
          return 200;
        }
        // The last NOTIFYs of a transfer that was already settled.
        if (/^\s*refer\s*(;|$)/i.test(event)) return respond(200, 'OK');
        return this.answerOther(request, respond);
      }
      default:
        return this.answerOther(request, respond);
    }
  }

  private answerOther(
    request: SipRequest,
    respond: (status: number, reason: string, extra?: { headers?: [string, string][] }) => number,
  ): number {
    const status = this.handlers.onRequest?.(request) ?? 405;
    if (status === 405) return respond(405, 'Method Not Allowed', { headers: [['Allow', ALLOWED_METHODS]] });
    return respond(status, status < 300 ? 'OK' : 'Not Handled');
  }

  private respondReinvite(
    request: SipRequest,
    transaction: ServerTransactionHandle,
    status: number,
    headers: [string, string][],
    body?: Buffer,
  ): number {
    const response = buildResponse(request, status, 'OK', { headers, body });
    transaction.respond(response);
    if (request.method === 'INVITE') this.ua.retransmitUntilAck(this, request, response, transaction);
    return status;
  }

  /** Marks the session over once; later calls are ignored. */
  finish(end: SessionEnd): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.ended = end;
    this.dialog.state = 'terminated';
    for (const cancel of this.cancelTimers.splice(0)) cancel();
    for (const fn of this.cleanups) fn();
    this.cleanups.clear();
    this.ua.forget(this);
    const watch = this.referWatch;
    if (watch?.accepted) {
      // The transferee hung up on us after taking the REFER, as many do: it is carrying the
      // transfer out. Its NOTIFYs may still come for a moment; without them, that is the outcome.
      this.ua.linger(this);
      watch.restartTimeout(REFER_AFTER_BYE_MS, {
        ok: true,
        detail: '对方已接受转接并挂断了原通话（未收到转接结果）',
      });
    } else {
      watch?.settle({ ok: false, detail: '通话已结束，转接未完成' });
    }
    this.handlers.onEnded?.(end);
    this.resolveEnded(end);
  }
}

export interface InviteOptions {
  /** Request-URI, e.g. sip:13800000000@carrier.example.cn. */
  uri: string;
  /** From value without tag, e.g. "<sip:02160881000@carrier.example.cn>". */
  from: string;
  to: string;
  /** The first hop (outbound proxy or the trunk's address). */
  destination: SipDestination;
  sdp?: string;
  headers?: Iterable<readonly [string, string]>;
  /**
   * The trunk's credentials: 401/407 challenges are answered once each (RFC 3261 §22.2), and
   * the session keeps them for its in-dialog requests (BYE, re-INVITE).
   */
  auth?: DigestAuthenticator;
  /** Provisional responses, 100 Trying included, for early media (183 with SDP) and progress. */
  onProvisional?: (response: SipResponse) => void;
  signal?: AbortSignal;
}

export type InviteOutcome =
  | { answered: true; session: InviteSession; response: SipResponse }
  | { answered: false; status: number; reason: string; response?: SipResponse; cancelled: boolean };

/** An INVITE to us while it rings. */
export class IncomingInvite {
  readonly localTag = newTag();
  /** Aborted when the caller cancels (CANCEL) before we answered. */
  readonly cancelled = new AbortController();
  private answered = false;
  /** No more provisional responses: a final one went out or the answer is under way. */
  private finalSent = false;
  /** A final response went out. */
  private responded = false;
  /** The caller requires reliable provisional responses (RFC 3262). */
  private readonly reliable: boolean;
  private rseq: RSeqCounter | null = null;
  /** The reliable provisional waiting for its PRACK; only one at a time (§3). */
  private unacked: {
    rseq: number;
    hasSdp: boolean;
    stop: () => void;
    acked: Promise<boolean>;
    settle: (acked: boolean) => void;
  } | null = null;
  private readonly queued: { status: 180 | 183; sdp?: string }[] = [];

  constructor(
    private readonly ua: SipUserAgent,
    readonly request: SipRequest,
    readonly transaction: ServerTransactionHandle,
    readonly source: RequestSource,
    /** The session timer the 2xx will carry (negotiated when the INVITE arrived). */
    private readonly timer: Extract<UasSessionTimerDecision, { accept: true }> | null = null,
  ) {
    this.reliable = provisionalMode(request.headers, false) === 'reliable';
  }

  get callId(): string {
    return this.request.headers.get('Call-ID') ?? '';
  }

  /** The early dialog's key: PRACKs find the INVITE they acknowledge by it. */
  get dialogId(): string {
    return dialogKey(this.callId, this.localTag, tagOf(this.request.headers.get('From')) ?? '');
  }

  /**
   * Sends a provisional response (180 ringing, 183 with early media). When the caller requires
   * 100rel it goes reliably: retransmitted until its PRACK, and a second one waits for the first's.
   */
  progress(status: 180 | 183, sdp?: string): void {
    if (this.finalSent) return;
    if (!this.reliable) {
      this.transaction.respond(this.provisional(status, sdp));
      return;
    }
    if (this.unacked) this.queued.push({ status, sdp });
    else this.sendReliable(status, sdp);
  }

  private provisional(status: 180 | 183, sdp?: string, extra: [string, string][] = []): SipResponse {
    const headers: [string, string][] = [['Contact', this.ua.contact()], ...extra];
    if (sdp) headers.push(['Content-Type', 'application/sdp']);
    return buildResponse(this.request, status, status === 180 ? 'Ringing' : 'Session Progress', {
      toTag: this.localTag,
      headers,
      body: sdp ? Buffer.from(sdp) : undefined,
    });
  }

  /** RFC 3262 §3: RSeq, then retransmissions at T1, 2·T1, 4·T1... for up to 64·T1. */
  private sendReliable(status: 180 | 183, sdp?: string): void {
    this.rseq ??= new RSeqCounter();
    const rseq = this.rseq.next();
    const response = this.provisional(status, sdp, [
      ['Require', '100rel'],
      ['RSeq', String(rseq)],
      ['Allow', ALLOWED_METHODS],
    ]);
    this.ua.trackEarly(this);
    const { t1, timers } = this.ua.port;
    let interval = t1;
    let cancel = () => {};
    let settle!: (acked: boolean) => void;
    const acked = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    const tick = () => {
      this.transaction.respond(response);
      interval *= 2;
      cancel = timers.set(interval, tick);
    };
    const giveUp = timers.set(64 * t1, () => this.neverAcknowledged());
    const stop = () => {
      cancel();
      giveUp();
    };
    this.unacked = { rseq, hasSdp: sdp !== undefined, stop, acked, settle };
    this.transaction.respond(response);
    cancel = timers.set(interval, tick);
  }

  /** A PRACK in this early dialog: 200 when it acknowledges the provisional we wait for, else 481. */
  onPrack(request: SipRequest, transaction: ServerTransactionHandle): void {
    const rack = parseRAck(request.headers.get('RAck') ?? '');
    const unacked = this.unacked;
    const invite = cseqOf(this.request);
    if (
      !rack ||
      !unacked ||
      !invite ||
      !rackMatches(rack, { rseq: unacked.rseq, cseq: invite.seq, method: 'INVITE' })
    ) {
      transaction.respond(buildResponse(request, 481, 'Call/Transaction Does Not Exist'));
      return;
    }
    transaction.respond(buildResponse(request, 200, 'OK'));
    this.unacked = null;
    unacked.stop();
    unacked.settle(true);
    const next = this.queued.shift();
    if (next && !this.finalSent) this.sendReliable(next.status, next.sdp);
  }

  /** RFC 3262 §3: a reliable provisional never acknowledged fails the INVITE with a 5xx. */
  private neverAcknowledged(): void {
    const unacked = this.unacked;
    unacked?.stop();
    this.unacked = null;
    this.queued.length = 0;
    this.cancelled.abort(new Error('no PRACK for a reliable provisional response'));
    this.reject(500, 'Provisional Response Not Acknowledged');
    unacked?.settle(false);
  }

  private stopReliable(): void {
    this.unacked?.stop();
    this.unacked?.settle(false);
    this.unacked = null;
    this.queued.length = 0;
    this.ua.forgetEarly(this);
  }

  /**
   * Answers with `sdp` (our answer, or our offer when the INVITE had none) and resolves with the
   * confirmed session once the ACK arrives; rejects if it never does (the call is then ended
   * with BYE, §13.3.1.4) or the caller had cancelled.
   */
  async answer(sdp: string): Promise<{ session: InviteSession; ack: SipRequest }> {
    if (this.finalSent || this.cancelled.signal.aborted) throw new Error('call no longer ringing');
    this.finalSent = true;
    this.answered = true;
    this.queued.length = 0;
    // RFC 3262 §3: no 2xx while a reliable provisional carrying a session description waits for
    // its PRACK (the caller has to have our early answer before the final one).
    if (this.unacked?.hasSdp) await this.unacked.acked;
    if (this.responded || this.cancelled.signal.aborted) throw new Error('call no longer ringing');
    this.stopReliable();
    const dialog = Dialog.asUas(this.request, this.localTag, this.source.protocol);
    if (!dialog) throw new Error('INVITE cannot form a dialog');
    dialog.state = 'confirmed';
    const response = buildResponse(this.request, 200, 'OK', {
      toTag: this.localTag,
      headers: [
        ['Contact', this.ua.contact()],
        ['Allow', ALLOWED_METHODS],
        ['Supported', this.ua.supported],
        ...(this.timer?.headers ?? []),
        ['Content-Type', 'application/sdp'],
      ],
      body: Buffer.from(sdp),
    });
    const offer = this.request.body.toString('utf8');
    const session = new InviteSession(this.ua, dialog, 'uas', { local: sdp, remote: offer });
    session.learnPeer(this.request);
    this.responded = true;
    this.transaction.respond(response);
    this.ua.inviteFinished('inbound', 200);
    // The interval runs from the 2xx (RFC 4028 §10).
    session.runSessionTimer(this.timer?.timer ?? null);
    return this.ua.awaitAck(session, this.request, response, this.transaction);
  }

  /** Refuses the call with a final response (486 busy, 480, 403, 488...). */
  reject(status: number, reason: string, headers: [string, string][] = []): void {
    if (this.responded) return;
    this.finalSent = true;
    this.responded = true;
    this.stopReliable();
    this.transaction.respond(buildResponse(this.request, status, reason, { toTag: this.localTag, headers }));
    this.ua.inviteFinished('inbound', status);
  }

  /** The transaction layer answered the INVITE itself (408 after its limit): nothing more to send. */
  abandon(): void {
    if (!this.responded) this.ua.inviteFinished('inbound', 408);
    this.finalSent = true;
    this.responded = true;
    this.stopReliable();
    this.cancelled.abort(new Error('INVITE never answered'));
  }

  /** CANCEL arrived: 487 to the INVITE unless we already answered it (§9.2). */
  onCancel(): boolean {
    if (this.answered || this.finalSent) return false;
    this.reject(487, 'Request Terminated');
    this.cancelled.abort(new Error('caller cancelled'));
    return true;
  }
}

export interface SipUserAgentOptions {
  /** User part of our Contact, e.g. "callpilot". */
  contactUser?: string;
  userAgent?: string;
  /**
   * Screens a new INVITE before anything else: return a status (403) to refuse it statelessly,
   * or null to let it through to the handler.
   */
  screen?: (request: SipRequest, source: RequestSource) => { status: number; reason: string } | null;
  /** Whether OPTIONS pings get 503: a worker draining before shutdown. */
  draining?: () => boolean;
  /**
   * Session timers (RFC 4028), on by default with the RFC's 30 minutes: a call whose BYE was lost
   * would otherwise hold its media port and a slot of the trunk's cap forever. False turns them off.
   */
  sessionTimer?: SessionTimerConfig | false;
  /**
   * Told the final status of every INVITE: inbound, the one we sent; outbound, the one we got
   * (null when none came: timeout, transport failure, cancelled before any provisional).
   */
  onInviteFinal?: (direction: 'inbound' | 'outbound', status: number | null) => void;
}

interface Retransmit {
  cancel(): void;
  acked: (ack: SipRequest) => void;
}

export class SipUserAgent {
  private readonly sessions = new Map<string, InviteSession>();
  private readonly ringing = new Map<string, IncomingInvite>();
  private readonly retransmits = new Map<string, Retransmit>();
  /** Calls ringing in whose reliable provisionals wait for PRACKs, by early dialog. */
  private readonly early = new Map<string, IncomingInvite>();
  /** Ended calls whose accepted REFER may still be reported by NOTIFY, by dialog. */
  private readonly lingering = new Map<string, InviteSession>();
  private inviteHandler: ((invite: IncomingInvite) => void) | null = null;

  constructor(
    readonly port: SipTransactionPort,
    private readonly config: SipUserAgentOptions = {},
  ) {
    port.onRequest((request, transaction, source) => this.dispatch(request, transaction, source));
    port.onStrayResponse?.((response) => this.onStrayResponse(response));
  }

  /**
   * A 2xx retransmitted after its transaction ended (Timer M, 64·T1): our ACK never arrived, and
   * the far end will keep sending it until it does (§13.2.2.4), so the call's ACK goes again.
   * A 2xx of no call we know is dropped: without our INVITE there is no dialog to ACK and BYE in.
   */
  private onStrayResponse(response: SipResponse): void {
    const callId = response.headers.get('Call-ID');
    const localTag = tagOf(response.headers.get('From'));
    const remoteTag = tagOf(response.headers.get('To'));
    if (!callId || !localTag || !remoteTag) return;
    const session = this.sessions.get(dialogKey(callId, localTag, remoteTag));
    session?.reAck?.();
  }

  now(): number {
    return this.port.timers.now();
  }

  /** An INVITE got its final status (see `onInviteFinal`); an observer's failure stays its own. */
  inviteFinished(direction: 'inbound' | 'outbound', status: number | null): void {
    try {
      this.config.onInviteFinal?.(direction, status);
    } catch {
      // Counting must never break a call.
    }
  }

  contact(): string {
    const host = this.port.contactHost.includes(':') ? `[${this.port.contactHost}]` : this.port.contactHost;
    return `<sip:${this.config.contactUser ?? 'callpilot'}@${host}:${this.port.contactPort}>`;
  }

  onInvite(handler: (invite: IncomingInvite) => void): void {
    this.inviteHandler = handler;
  }

  /**
   * The option tags we implement; a request requiring any other gets 420 (RFC 3261 §8.2.2.3).
   * 100rel always, timer unless turned off.
   */
  get extensions(): readonly string[] {
    return this.sessionTimers ? ['timer', '100rel'] : ['100rel'];
  }

  get supported(): string {
    return this.extensions.join(', ');
  }

  /** The session-timer settings, or null when timers are off. */
  get sessionTimers(): SessionTimerConfig | null {
    const config = this.config.sessionTimer;
    return config === false ? null : (config ?? {});
  }

  /**
   * Live dialogs, calls ringing in and 2xx retransmissions: all 0 after the calls ended. Calls
   * ringing include those waiting for a PRACK; dialogs include ended calls still taking the
   * NOTIFYs of a transfer.
   */
  stats() {
    const ringing = new Set<IncomingInvite>([...this.ringing.values(), ...this.early.values()]);
    return {
      sessions: this.sessions.size + this.lingering.size,
      ringing: ringing.size,
      retransmits: this.retransmits.size,
    };
  }

  trackEarly(invite: IncomingInvite): void {
    this.early.set(invite.dialogId, invite);
  }

  forgetEarly(invite: IncomingInvite): void {
    if (this.early.get(invite.dialogId) === invite) this.early.delete(invite.dialogId);
  }

  linger(session: InviteSession): void {
    this.lingering.set(session.dialog.id, session);
  }

  stopLingering(session: InviteSession): void {
    if (this.lingering.get(session.dialog.id) === session) this.lingering.delete(session.dialog.id);
  }

  forget(session: InviteSession): void {
    this.sessions.delete(session.dialog.id);
    for (const [key, entry] of this.retransmits) {
      if (key.startsWith(`${session.dialog.id}\u0001`)) {
        entry.cancel();
        this.retransmits.delete(key);
      }
    }
  }

  /** Places a call; resolves when it is answered or finally refused. */
  invite(options: InviteOptions): Promise<InviteOutcome> {
    const callId = newCallId(this.port.contactHost);
    const localTag = newTag();
    const from = `${options.from};tag=${localTag}`;
    let cseq = 1;
    const timerConfig = this.sessionTimers;
    let timerRequest = timerConfig ? initialUacRequest(timerConfig) : null;
    const build = (extra: [string, string][]) =>
      createRequest('INVITE', options.uri, {
        from,
        to: options.to,
        callId,
        cseq,
        contact: this.contact(),
        headers: [
          ['Allow', ALLOWED_METHODS],
          ...(this.config.userAgent ? ([['User-Agent', this.config.userAgent]] as [string, string][]) : []),
          ...(options.headers ?? []),
          ...(timerRequest ? uacRequestHeaders(timerRequest).filter(([name]) => name !== 'Supported') : []),
          ['Supported', this.supported],
          ...extra,
        ],
        body: options.sdp ? Buffer.from(options.sdp) : undefined,
        contentType: 'application/sdp',
      });

    return new Promise<InviteOutcome>((resolve) => {
      let settled = false;
      let current: ClientTransactionHandle | null = null;
      let provisional = false;
      let cancelWanted = false;
      let challenged = 0;
      let raisedInterval = false;
      /** Early dialogs by To tag (a forked INVITE has several), for the PRACKs of reliable 1xx. */
      let early = new Map<string, { dialog: Dialog; tracker: ReliableProvisionalTracker }>();
      const credentials = (request: { uri: string; body?: Buffer }): [string, string][] =>
        (options.auth?.authorize({ method: 'INVITE', uri: request.uri, body: request.body }) ?? []).map(
          (header) => [header.name, header.value],
        );
      const confirmed = new Map<string, InviteSession>();

      const settle = (outcome: InviteOutcome) => {
        if (settled) return;
        settled = true;
        this.inviteFinished(
          'outbound',
          outcome.answered ? outcome.response.status : outcome.response ? outcome.status : null,
        );
        options.signal?.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onAbort = () => {
        cancelWanted = true;
        // §9.1: a CANCEL may only follow a provisional response; otherwise it goes out when one
        // comes. The caller is not kept waiting for that (up to Timer B): a 2xx arriving later
        // is ACKed and hung up below.
        if (provisional) current?.cancel();
        else settle({ answered: false, status: 487, reason: 'Request Terminated', cancelled: true });
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });

      const send = () => {
        early = new Map();
        const request = build(
          credentials({ uri: options.uri, body: options.sdp ? Buffer.from(options.sdp) : undefined }),
        );
        current = this.port.request(request, options.destination, {
          onResponse: (response) => onResponse(request, response),
          onFailure: (kind) =>
            settle({
              answered: false,
              status: kind === 'timeout' ? 408 : 503,
              reason: kind === 'timeout' ? 'Request Timeout' : 'Service Unavailable',
              cancelled: cancelWanted,
            }),
        });
      };

      const ack = (request: SipRequest, dialog: Dialog) => {
        const ackRequest = dialog.createRequest('ACK', { cseq: cseqOf(request)?.seq ?? cseq });
        for (const name of ['Authorization', 'Proxy-Authorization']) {
          for (const value of request.headers.getAll(name)) ackRequest.request.headers.append(name, value);
        }
        this.port.sendAck(ackRequest.request, ackRequest.destination);
      };

      /**
       * RFC 3262: PRACK a reliable provisional once, in its early dialog. False for a
       * retransmission or one out of order, which are not passed on.
       */
      const acknowledgeReliable = (request: SipRequest, response: SipResponse): boolean => {
        const toTag = tagOf(response.headers.get('To'));
        const rseq = parseRSeq(response.headers.get('RSeq') ?? '');
        const invite = cseqOf(request);
        if (!toTag || rseq === null || !invite) return true;
        let entry = early.get(toTag);
        if (!entry) {
          const dialog = Dialog.asUac(request, response, options.destination.protocol);
          if (!dialog) return true;
          entry = { dialog, tracker: new ReliableProvisionalTracker() };
          early.set(toTag, entry);
        }
        if (entry.tracker.receive(rseq) !== 'new') return false;
        const prack = entry.dialog.createRequest('PRACK', {
          headers: [['RAck', ReliableProvisionalTracker.rackFor(rseq, { cseq: invite.seq })]],
        });
        const { uri, body } = prack.request;
        for (const header of options.auth?.authorize({ method: 'PRACK', uri, body }) ?? []) {
          prack.request.headers.append(header.name, header.value);
        }
        // Its own transaction retransmits it; a lost one only costs a retransmitted 1xx.
        this.port.request(prack.request, prack.destination, { onResponse: () => {}, onFailure: () => {} });
        return true;
      };

      const onResponse = (request: SipRequest, response: SipResponse) => {
        if (response.status < 200) {
          // A 100 comes from the next hop, not the callee: it allows no CANCEL (§9.1), but a
          // caller showing progress (测试呼叫) still wants to see the trunk took the INVITE.
          if (response.status > 100) {
            if (requires100rel(response.headers) && !acknowledgeReliable(request, response)) return;
            provisional = true;
            if (cancelWanted) current?.cancel();
          }
          options.onProvisional?.(response);
          return;
        }
        if (response.status < 300) {
          const toTag = tagOf(response.headers.get('To')) ?? '';
          const known = confirmed.get(toTag);
          if (known) {
            // A retransmitted 2xx: our ACK was lost (§13.2.2.4). ACK again.
            ack(request, known.dialog);
            return;
          }
          const dialog = Dialog.asUac(request, response, options.destination.protocol);
          if (!dialog) return;
          // PRACKs are requests of the early dialog and took CSeq numbers: the call's next
          // request (a BYE) must go above them or the far end refuses it as out of order.
          const earlier = early.get(toTag);
          if (earlier) dialog.localSeq = Math.max(dialog.localSeq, earlier.dialog.localSeq);
          const session = new InviteSession(this, dialog, 'uac', {
            local: options.sdp ?? '',
            remote: response.body.toString('utf8'),
          });
          session.auth = options.auth ?? null;
          session.learnPeer(response);
          confirmed.set(toTag, session);
          session.reAck = () => ack(request, dialog);
          ack(request, dialog);
          if (settled || cancelWanted) {
            // A second fork answered, or the answer crossed our CANCEL: keep one call only.
            this.sessions.set(dialog.id, session);
            void session.bye();
            if (!settled)
              settle({ answered: false, status: 487, reason: 'Request Terminated', cancelled: true });
            return;
          }
          this.sessions.set(dialog.id, session);
          session.runSessionTimer(timerRequest ? timerFromUacResponse(response.headers) : null);
          settle({ answered: true, session, response });
          return;
        }
        if (response.status === 422 && timerRequest && !raisedInterval && !cancelWanted) {
          // RFC 4028 §7.3: our interval is below the far end's minimum; ask again with its Min-SE.
          const raised = retryAfter422(timerRequest, response.headers);
          if (raised) {
            timerRequest = raised;
            raisedInterval = true;
            cseq++;
            send();
            return;
          }
        }
        if ((response.status === 401 || response.status === 407) && options.auth && !cancelWanted) {
          const kind = response.status === 401 ? 'www' : 'proxy';
          const values = response.headers.getAll(kind === 'www' ? 'WWW-Authenticate' : 'Proxy-Authenticate');
          if (challenged < 3 && options.auth.onChallenge(kind, values, challenged > 0).ok) {
            challenged++;
            cseq++;
            send();
            return;
          }
        }
        settle({
          answered: false,
          status: response.status,
          reason: response.reason,
          response,
          cancelled: cancelWanted,
        });
      };

      if (options.signal?.aborted) {
        settle({ answered: false, status: 487, reason: 'Request Terminated', cancelled: true });
        return;
      }
      send();
    });
  }

  /** Sends an out-of-dialog OPTIONS (a trunk's health ping) and resolves with its final status. */
  ping(uri: string, destination: SipDestination, from: string): Promise<{ status: number; rttMs: number }> {
    const started = this.now();
    const request = createRequest('OPTIONS', uri, {
      from: `${from};tag=${newTag()}`,
      to: `<${uri}>`,
      callId: newCallId(this.port.contactHost),
      cseq: 1,
      contact: this.contact(),
      headers: [['Accept', 'application/sdp']],
    });
    return new Promise((resolve) => {
      this.port.request(request, destination, {
        onResponse: (response) => {
          if (response.status >= 200) resolve({ status: response.status, rttMs: this.now() - started });
        },
        onFailure: (kind) => resolve({ status: kind === 'timeout' ? 408 : 503, rttMs: this.now() - started }),
      });
    });
  }

  /** The callee side's 2xx is retransmitted until its ACK (RFC 6026 §8.1). */
  awaitAck(
    session: InviteSession,
    request: SipRequest,
    response: SipResponse,
    transaction: ServerTransactionHandle,
  ): Promise<{ session: InviteSession; ack: SipRequest }> {
    this.sessions.set(session.dialog.id, session);
    this.ringing.delete(this.ringingKey(request));
    return new Promise((resolve, reject) => {
      this.retransmitUntilAck(session, request, response, transaction, {
        acked: (ack) => resolve({ session, ack }),
        timedOut: () => reject(new Error('no ACK for 200 OK')),
      });
    });
  }

  retransmitUntilAck(
    session: InviteSession,
    request: SipRequest,
    response: SipResponse,
    transaction: ServerTransactionHandle,
    outcome: { acked?: (ack: SipRequest) => void; timedOut?: () => void } = {},
  ): void {
    const seq = cseqOf(request)?.seq ?? 0;
    const key = `${session.dialog.id}\u0001${seq}`;
    const { t1, t2, timers } = this.port;
    const started = timers.now();
    let interval = t1;
    let cancelTimer = () => {};
    const entry: Retransmit = {
      cancel: () => cancelTimer(),
      acked: (ack) => {
        cancelTimer();
        this.retransmits.delete(key);
        outcome.acked?.(ack);
      },
    };
    const tick = () => {
      if (timers.now() - started >= 64 * t1) {
        this.retransmits.delete(key);
        outcome.timedOut?.();
        // §13.3.1.4: no ACK means the caller never got our answer; end the call.
        if (session.state !== 'ended') {
          void session.bye();
          session.finish({ by: 'local', reason: 'ack_timeout', at: timers.now() });
        }
        return;
      }
      transaction.respond(response);
      interval = Math.min(interval * 2, t2);
      cancelTimer = timers.set(interval, tick);
    };
    cancelTimer = timers.set(interval, tick);
    this.retransmits.set(key, entry);
  }

  private ringingKey(request: SipRequest): string {
    return `${request.headers.get('Call-ID') ?? ''}\u0000${tagOf(request.headers.get('From')) ?? ''}`;
  }

  private dispatch(request: SipRequest, transaction: ServerTransactionHandle | null, source: RequestSource) {
    const respond = (status: number, reason: string, headers: [string, string][] = []) =>
      transaction?.respond(buildResponse(request, status, reason, { toTag: newTag(), headers }));

    if (request.method === 'ACK') {
      const key = incomingDialogKey(request);
      const seq = cseqOf(request)?.seq;
      if (!key || seq === undefined) return;
      const retransmit = this.retransmits.get(`${key}\u0001${seq}`);
      if (retransmit) retransmit.acked(request);
      return;
    }
    if (!transaction) return;

    if (request.method === 'CANCEL') {
      const invite = this.ringing.get(this.ringingKey(request));
      const target = this.port.findInviteTransaction(request);
      if (!target && !invite) return respond(481, 'Call/Transaction Does Not Exist');
      transaction.respond(buildResponse(request, 200, 'OK'));
      if (invite) {
        invite.onCancel();
        this.ringing.delete(this.ringingKey(request));
      }
      return;
    }

    const key = incomingDialogKey(request);
    if (key) {
      if (request.method === 'PRACK') {
        const invite = this.early.get(key);
        if (invite) return invite.onPrack(request, transaction);
      }
      const session =
        this.sessions.get(key) ?? (request.method === 'NOTIFY' ? this.lingering.get(key) : undefined);
      if (!session) return respond(481, 'Call/Transaction Does Not Exist');
      session.receive(request, transaction);
      return;
    }

    switch (request.method) {
      case 'INVITE': {
        const refuse = (status: number, reason: string, headers?: [string, string][]) => {
          this.inviteFinished('inbound', status);
          return respond(status, reason, headers);
        };
        const refused = this.config.screen?.(request, source);
        if (refused) return refuse(refused.status, refused.reason);
        if (!this.inviteHandler) return refuse(480, 'Temporarily Unavailable');
        if (!parseNameAddr(request.headers.get('Contact') ?? '')) return refuse(400, 'Missing Contact');
        const unsupported = badExtension(request, this.extensions);
        if (unsupported) return refuse(420, 'Bad Extension', unsupported);
        const timers = this.sessionTimers;
        const timer = timers ? negotiateAsUas(request.headers, timers) : null;
        if (timer && !timer.accept) return refuse(422, 'Session Interval Too Small', timer.headers);
        const invite = new IncomingInvite(this, request, transaction, source, timer);
        this.ringing.set(this.ringingKey(request), invite);
        // The layer answered 408 for us after its INVITE limit: the call is no longer ringing.
        transaction.onFailure = (reason) => {
          if (reason !== 'no-response') return;
          this.ringing.delete(this.ringingKey(request));
          invite.abandon();
        };
        // Forget it once it got a final answer other than 200 (the 200 path removes it itself).
        const reject = invite.reject.bind(invite);
        invite.reject = (status, reason, headers) => {
          this.ringing.delete(this.ringingKey(request));
          reject(status, reason, headers);
        };
        this.inviteHandler(invite);
        return;
      }
      case 'OPTIONS':
        if (this.config.draining?.()) return respond(503, 'Service Unavailable', [['Retry-After', '30']]);
        return respond(200, 'OK', [
          ['Allow', ALLOWED_METHODS],
          ['Accept', 'application/sdp'],
          ['Supported', this.supported],
        ]);
      case 'BYE':
      case 'INFO':
      case 'UPDATE':
      case 'PRACK':
      case 'NOTIFY':
        return respond(481, 'Call/Transaction Does Not Exist');
      default:
        return respond(405, 'Method Not Allowed', [['Allow', ALLOWED_METHODS]]);
    }
  }
}
