/**
 * The SIP user agent core (RFC 3261 §8, §12–§15 with RFC 6026): INVITE sessions as caller and
 * callee, in-dialog requests, CANCEL, OPTIONS, and dispatch of incoming requests to dialogs.
 *
 * It sits on the transaction layer through `SipTransactionPort` and treats session descriptions
 * as opaque text: offer/answer is the call leg's business (sdp.ts). Every timer goes through the
 * port's timers, so a test runs a whole call on a virtual clock.
 *
 * Timing rules that live here rather than in the transactions (RFC 6026): the callee's 2xx is
 * retransmitted by this core (T1 doubling up to T2) until the ACK arrives or 64·T1 pass (then the
 * call is ended with BYE); the caller ACKs every 2xx it sees, retransmissions included.
 */
import {
  buildResponse,
  createRequest,
  cseqOf,
  Dialog,
  incomingDialogKey,
  newCallId,
  newTag,
  type SipDestination,
  type SipTransportName,
  tagOf,
} from './dialog';
import type { DigestAuthenticator } from './digest';
import { parseNameAddr, type SipRequest, type SipResponse } from './message';

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
}

export const ALLOWED_METHODS = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, REFER, NOTIFY, PRACK';

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
  /** An in-dialog request the core does not handle itself (INFO, NOTIFY). Return the status to answer. */
  onRequest?(request: SipRequest): number;
  onEnded?(end: SessionEnd): void;
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
  ended: SessionEnd | null = null;
  readonly whenEnded: Promise<SessionEnd>;
  private resolveEnded!: (end: SessionEnd) => void;
  /** The trunk's credentials from the INVITE: in-dialog requests carry them and answer challenges too. */
  auth: DigestAuthenticator | null = null;
  /** A re-INVITE or UPDATE of ours waiting for its final response: glare detection (§14.1). */
  private pendingOffer: 'INVITE' | 'UPDATE' | null = null;
  private readonly cleanups = new Set<() => void>();

  constructor(
    readonly ua: SipUserAgent,
    readonly dialog: Dialog,
    readonly role: 'uac' | 'uas',
    sdp: { local: string; remote: string },
  ) {
    this.localSdp = sdp.local;
    this.remoteSdp = sdp.remote;
    this.whenEnded = new Promise((resolve) => {
      this.resolveEnded = resolve;
    });
  }

  get callId(): string {
    return this.dialog.callId;
  }

  /** Registers a cancel function run when the session ends (timers of the owner). */
  onCleanup(fn: () => void): void {
    if (this.state === 'ended') fn();
    else this.cleanups.add(fn);
  }

  /** Ends the call from our side. Resolves when the BYE got its final response (or timed out). */
  async bye(reasonHeader?: string): Promise<void> {
    if (this.state === 'ended') return;
    this.finish({ by: 'local', reason: 'bye', at: this.ua.now() });
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
    }
    for (const header of this.auth?.authorize({ method, uri: request.uri, body: request.body }) ?? []) {
      request.headers.append(header.name, header.value);
    }
    return new Promise((resolve, reject) => {
      this.ua.port.request(request, destination, {
        onResponse: (response) => {
          if (response.status < 200) return;
          if (!challenged && this.acceptChallenge(response)) {
            // A proxy that challenges BYE would otherwise keep the call up (and billed) on its side.
            resolve(this.send(method, options, true));
            return;
          }
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
   * Re-offers (hold/unhold, or a session refresh with the same description). A 491 means both
   * sides re-offered at once: retry after the random wait of §14.1 (2.1–4 s for the Call-ID's
   * owner, up to 2 s for the other side).
   */
  async reoffer(sdp: string, method: 'INVITE' | 'UPDATE' = 'INVITE'): Promise<SipResponse> {
    for (let attempt = 0; ; attempt++) {
      if (this.state === 'ended') throw new Error('session ended');
      this.pendingOffer = method;
      let response: SipResponse;
      try {
        response = await this.send(method, { body: Buffer.from(sdp), contentType: 'application/sdp' });
      } finally {
        this.pendingOffer = null;
      }
      if (response.status >= 200 && response.status < 300) {
        this.localSdp = sdp;
        if (response.body.length > 0) this.remoteSdp = response.body.toString('utf8');
        this.dialog.refreshTarget(response);
        return response;
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
        this.dialog.refreshTarget(request);
        const contact: [string, string] = ['Contact', this.ua.contact()];
        if (request.body.length === 0) {
          // A refresh without an offer: we offer our current description again (re-INVITE) or
          // just confirm (UPDATE).
          const body = request.method === 'INVITE' ? Buffer.from(this.localSdp) : undefined;
          const headers: [string, string][] = [contact];
          if (body) headers.push(['Content-Type', 'application/sdp']);
          return this.respondReinvite(request, transaction, 200, headers, body);
        }
        const offer = request.body.toString('utf8');
        const answer = this.handlers.onOffer ? this.handlers.onOffer(offer, request.method) : this.localSdp;
        if (answer === null) return respond(488, 'Not Acceptable Here');
        this.remoteSdp = offer;
        this.localSdp = answer;
        return this.respondReinvite(
          request,
          transaction,
          200,
          [contact, ['Content-Type', 'application/sdp']],
          Buffer.from(answer),
        );
      }
      default: {
        const status = this.handlers.onRequest?.(request) ?? 405;
        if (status === 405)
          return respond(405, 'Method Not Allowed', { headers: [['Allow', ALLOWED_METHODS]] });
        return respond(status, status < 300 ? 'OK' : 'Not Handled');
      }
    }
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
    for (const fn of this.cleanups) fn();
    this.cleanups.clear();
    this.ua.forget(this);
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
  private finalSent = false;

  constructor(
    private readonly ua: SipUserAgent,
    readonly request: SipRequest,
    readonly transaction: ServerTransactionHandle,
    readonly source: RequestSource,
  ) {}

  get callId(): string {
    return this.request.headers.get('Call-ID') ?? '';
  }

  /** Sends a provisional response (180 ringing, 183 with early media). */
  progress(status: 180 | 183, sdp?: string): void {
    if (this.finalSent) return;
    const headers: [string, string][] = [['Contact', this.ua.contact()]];
    if (sdp) headers.push(['Content-Type', 'application/sdp']);
    this.transaction.respond(
      buildResponse(this.request, status, status === 180 ? 'Ringing' : 'Session Progress', {
        toTag: this.localTag,
        headers,
        body: sdp ? Buffer.from(sdp) : undefined,
      }),
    );
  }

  /**
   * Answers with `sdp` (our answer, or our offer when the INVITE had none) and resolves with the
   * confirmed session once the ACK arrives; rejects if it never does (the call is then ended
   * with BYE, §13.3.1.4) or the caller had cancelled.
   */
  answer(sdp: string): Promise<{ session: InviteSession; ack: SipRequest }> {
    if (this.finalSent || this.cancelled.signal.aborted)
      return Promise.reject(new Error('call no longer ringing'));
    this.finalSent = true;
    this.answered = true;
    const dialog = Dialog.asUas(this.request, this.localTag, this.source.protocol);
    if (!dialog) return Promise.reject(new Error('INVITE cannot form a dialog'));
    dialog.state = 'confirmed';
    const response = buildResponse(this.request, 200, 'OK', {
      toTag: this.localTag,
      headers: [
        ['Contact', this.ua.contact()],
        ['Allow', ALLOWED_METHODS],
        ['Content-Type', 'application/sdp'],
      ],
      body: Buffer.from(sdp),
    });
    const offer = this.request.body.toString('utf8');
    const session = new InviteSession(this.ua, dialog, 'uas', { local: sdp, remote: offer });
    this.transaction.respond(response);
    return this.ua.awaitAck(session, this.request, response, this.transaction);
  }

  /** Refuses the call with a final response (486 busy, 480, 403, 488...). */
  reject(status: number, reason: string, headers: [string, string][] = []): void {
    if (this.finalSent) return;
    this.finalSent = true;
    this.transaction.respond(buildResponse(this.request, status, reason, { toTag: this.localTag, headers }));
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
}

interface Retransmit {
  cancel(): void;
  acked: (ack: SipRequest) => void;
}

export class SipUserAgent {
  private readonly sessions = new Map<string, InviteSession>();
  private readonly ringing = new Map<string, IncomingInvite>();
  private readonly retransmits = new Map<string, Retransmit>();
  private inviteHandler: ((invite: IncomingInvite) => void) | null = null;

  constructor(
    readonly port: SipTransactionPort,
    private readonly config: SipUserAgentOptions = {},
  ) {
    port.onRequest((request, transaction, source) => this.dispatch(request, transaction, source));
  }

  now(): number {
    return this.port.timers.now();
  }

  contact(): string {
    const host = this.port.contactHost.includes(':') ? `[${this.port.contactHost}]` : this.port.contactHost;
    return `<sip:${this.config.contactUser ?? 'callpilot'}@${host}:${this.port.contactPort}>`;
  }

  onInvite(handler: (invite: IncomingInvite) => void): void {
    this.inviteHandler = handler;
  }

  /** Live dialogs, calls ringing in and 2xx retransmissions: all 0 after the calls ended. */
  stats() {
    return { sessions: this.sessions.size, ringing: this.ringing.size, retransmits: this.retransmits.size };
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
      const credentials = (request: { uri: string; body?: Buffer }): [string, string][] =>
        (options.auth?.authorize({ method: 'INVITE', uri: request.uri, body: request.body }) ?? []).map(
          (header) => [header.name, header.value],
        );
      const confirmed = new Map<string, InviteSession>();

      const settle = (outcome: InviteOutcome) => {
        if (settled) return;
        settled = true;
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

      const onResponse = (request: SipRequest, response: SipResponse) => {
        if (response.status < 200) {
          // A 100 comes from the next hop, not the callee: it allows no CANCEL (§9.1), but a
          // caller showing progress (测试呼叫) still wants to see the trunk took the INVITE.
          if (response.status > 100) {
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
          const session = new InviteSession(this, dialog, 'uac', {
            local: options.sdp ?? '',
            remote: response.body.toString('utf8'),
          });
          session.auth = options.auth ?? null;
          confirmed.set(toTag, session);
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
          settle({ answered: true, session, response });
          return;
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
      const session = this.sessions.get(key);
      if (!session) return respond(481, 'Call/Transaction Does Not Exist');
      session.receive(request, transaction);
      return;
    }

    switch (request.method) {
      case 'INVITE': {
        const refused = this.config.screen?.(request, source);
        if (refused) return respond(refused.status, refused.reason);
        if (!this.inviteHandler) return respond(480, 'Temporarily Unavailable');
        if (!parseNameAddr(request.headers.get('Contact') ?? '')) return respond(400, 'Missing Contact');
        const invite = new IncomingInvite(this, request, transaction, source);
        this.ringing.set(this.ringingKey(request), invite);
        // The layer answered 408 for us after its INVITE limit: the call is no longer ringing.
        transaction.onFailure = (reason) => {
          if (reason !== 'no-response') return;
          this.ringing.delete(this.ringingKey(request));
          invite.cancelled.abort(new Error('INVITE never answered'));
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
          ['Supported', 'timer, 100rel'],
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
