/**
 * SIP transaction layer (RFC 3261 §17, with the RFC 6026 "Accepted" states), on `SipTimers`.
 *
 *   const layer = createTransactionLayer({ transport, timers });
 *
 *   // Client side: one transaction per request (never ACK: see below).
 *   const invite = layer.request(request, { protocol: 'udp', address: 'trunk.example.cn', port: 5060 }, {
 *     onProvisional(response) {},      // every 1xx
 *     onFinal(response) {},            // non-2xx once; for INVITE every 2xx (retransmissions, forks)
 *     onError({ status, reason }) {},  // 408: timer B/F fired; 503: transport failure. Never after onFinal.
 *   });
 *   invite.cancel();                   // §9.1: CANCEL with the INVITE's Via, once a 1xx arrived
 *
 *   // Server side.
 *   layer.onRequest((request, tx) => tx.respond(createResponse(request, 180, 'Ringing', toTag)));
 *   layer.onAck((ack, source) => {});  // ACK for 2xx and every ACK no transaction absorbs
 *   layer.onStrayResponse((response, source) => {}); // a 2xx to INVITE no transaction takes (re-ACK it)
 *   layer.findInviteServerTransaction(cancel)  // the INVITE a CANCEL cancels: answer it 487
 *   layer.size(); layer.stats(); layer.close();
 *
 * The request's top Via carries the branch: `request` adds a Via with a fresh branch when the
 * request has none (a CANCEL keeps the INVITE's), and the transport stamps its sent-by.
 *
 * What the layer does by itself: retransmits requests (A, E) and final responses (G) on
 * unreliable transports, absorbs retransmitted requests and re-sends the last response, sends the
 * ACK for a non-2xx final response (§17.1.1.3), sends 100 Trying when the TU has not answered an
 * INVITE within `tryingDelayMs` (200 ms by default, §17.2.1; 0 behind a proxy that takes silence
 * for a dead worker), and ends every transaction in bounded time: the maps hold nothing once the
 * timers ran out. What it leaves to the UA: the ACK for a 2xx and the 2xx retransmissions
 * until that ACK (dialog state, §13.3.1.4), which the UA sends through the transport directly.
 *
 * Bounds beyond the RFC timers, so no state waits forever on a peer or a TU:
 * - a client INVITE in Proceeding (ringing) is cancelled by the layer after `inviteLimitMs`
 *   (default 180 s, the floor of Timer C, §16.6); after any CANCEL, 64*T1 without a final
 *   response ends the INVITE with a 408 (§9.1);
 * - a server INVITE the TU has not answered within `inviteLimitMs` is answered 408 and the TU
 *   told through `onFailure('no-response')`; a non-INVITE one ends after 64*T1 (the client gave up).
 *
 * Matching: RFC 3261 branches (magic cookie) by branch, sent-by and method; RFC 2543 requests
 * (no cookie) by Request-URI, From tag, Call-ID, CSeq and the whole top Via, which is enough to
 * absorb their retransmissions. Responses with more than one Via are dropped (§8.1.3.3).
 */
import { randomBytes } from 'node:crypto';
import {
  formatVia,
  isRequest,
  parseCSeq,
  parseNameAddr,
  parseVia,
  SipHeaders,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './message';
import type { SipTimers } from './timers';
import type { SipEndpoint, SipLogger, SipTransport } from './transport';

/** What the layer needs from a transport: a real `SipTransport`, or a fake in tests. */
export type TransactionTransport = Pick<SipTransport, 'send' | 'sendResponse' | 'onMessage' | 'advertised'>;

export interface TransactionLayerOptions {
  transport: TransactionTransport;
  timers: SipTimers;
  /** RTT estimate, default 500 ms. */
  t1?: number;
  /** Longest interval between retransmissions of non-INVITE requests and INVITE responses, default 4 s. */
  t2?: number;
  /** Longest a message stays in the network, default 5 s. */
  t4?: number;
  /** See the bounds above. Default 180 s. */
  inviteLimitMs?: number;
  /** Timer D, default 32 s; tests that check nothing is left shorten it with T1. */
  timerD?: number;
  /**
   * How long an INVITE may go unanswered before the layer sends 100 Trying. Default 200 ms
   * (§17.2.1), which saves the packet when the TU answers quickly. 0: as soon as the TU has seen
   * the INVITE without answering it, for a worker behind a proxy that takes silence for death
   * (Kamailio's dispatcher fails over after INVITE_FIRST_REPLY_MS).
   */
  tryingDelayMs?: number;
  logger?: SipLogger;
}

export interface ClientFailure {
  /** 408 when no response came in time (timer B or F), 503 when the transport failed. */
  status: 408 | 503;
  reason: string;
  cause?: unknown;
}

export interface ClientHandlers {
  onProvisional?(response: SipResponse): void;
  onFinal(response: SipResponse): void;
  onError(failure: ClientFailure): void;
}

export type ClientState = 'calling' | 'trying' | 'proceeding' | 'completed' | 'accepted' | 'terminated';
export type ServerState = 'trying' | 'proceeding' | 'completed' | 'confirmed' | 'accepted' | 'terminated';

export interface ClientTransaction {
  readonly branch: string;
  readonly method: string;
  readonly request: SipRequest;
  readonly state: ClientState;
  /** Where the request went, once the transport sent it (resolved address, actual protocol). */
  readonly flow: SipEndpoint | undefined;
  /**
   * INVITE only. Sends a CANCEL (built per §9.1 unless given) to the same destination with the
   * INVITE's Via, as its own transaction; deferred until a provisional response arrived, dropped
   * if a final response comes first. False when there is nothing left to cancel.
   */
  cancel(handlers?: Partial<ClientHandlers>, cancelRequest?: SipRequest): boolean;
}

export type ServerFailure = 'no-ack' | 'no-response' | 'transport';

export interface ServerTransaction {
  readonly branch: string;
  readonly method: string;
  readonly request: SipRequest;
  readonly source: SipEndpoint;
  readonly state: ServerState;
  /**
   * Sends a response through the transaction: provisional ones while no final was sent, one
   * final, and for INVITE the TU's 2xx retransmissions while Accepted. False (nothing sent) otherwise.
   */
  respond(response: SipResponse): boolean;
  /** Set by the TU: the transaction ended without the exchange completing. */
  onFailure?: (reason: ServerFailure) => void;
}

export interface TransactionStats {
  clientTransactions: number;
  serverTransactions: number;
  clientCreated: number;
  serverCreated: number;
  retransmissions: number;
  /** Retransmitted requests and responses a transaction took without passing them up. */
  absorbed: number;
  timeouts: number;
  transportErrors: number;
  /** 2xx responses to INVITE passed to `onStrayResponse`. */
  strayResponses: number;
  /** ACKs passed to `onAck`: for a 2xx, or matching no transaction. */
  acksToTu: number;
  /** Responses no transaction takes and the TU does not need (non-2xx, or more than one Via). */
  droppedResponses: number;
  /** A TU callback threw. */
  callbackErrors: number;
}

export interface TransactionLayer {
  readonly transport: TransactionTransport;
  request(request: SipRequest, destination: SipEndpoint, handlers: ClientHandlers): ClientTransaction;
  onRequest(handler: (request: SipRequest, transaction: ServerTransaction) => void): void;
  onAck(handler: (ack: SipRequest, source: SipEndpoint) => void): void;
  onStrayResponse(handler: (response: SipResponse, source: SipEndpoint) => void): void;
  findInviteServerTransaction(cancel: SipRequest): ServerTransaction | undefined;
  /** Transactions alive, client and server. */
  size(): number;
  stats(): TransactionStats;
  /** Drops every transaction and timer without calling the TU, and stops listening. */
  close(): void;
}

const MAGIC_COOKIE = 'z9hG4bK';
const TRYING_DELAY_MS = 200;
// Timer D: "at least 32 s" for unreliable transports, independent of T1 (§17.1.1.2).
const TIMER_D_MS = 32_000;

export const newBranch = () => `${MAGIC_COOKIE}${randomBytes(12).toString('base64url')}`;
export const newTag = () => randomBytes(6).toString('hex');

const isInvite = (method: string) => method === 'INVITE';
const cseqOf = (message: SipMessage) => parseCSeq(message.headers.get('CSeq') ?? '');
const tagOf = (value: string | undefined) => {
  const tag = value === undefined ? undefined : parseNameAddr(value)?.params.get('tag');
  return tag ?? undefined;
};

/**
 * A response to `request` (§8.2.6): Via, From, Call-ID and CSeq copied, To copied with `toTag`
 * added when it has none (never for 100 Trying, which carries no tag).
 */
export function createResponse(
  request: SipRequest,
  status: number,
  reason: string,
  toTag?: string,
): SipResponse {
  const headers = new SipHeaders();
  for (const via of request.headers.getAll('Via')) headers.append('Via', via);
  headers.append('From', request.headers.get('From') ?? '');
  const to = request.headers.get('To') ?? '';
  const tagged = toTag !== undefined && status > 100 && tagOf(to) === undefined;
  headers.append('To', tagged ? `${to};tag=${toTag}` : to);
  headers.append('Call-ID', request.headers.get('Call-ID') ?? '');
  headers.append('CSeq', request.headers.get('CSeq') ?? '');
  const timestamp = request.headers.get('Timestamp');
  if (status === 100 && timestamp !== undefined) headers.append('Timestamp', timestamp);
  return { version: 'SIP/2.0', status, reason, headers, body: Buffer.alloc(0) };
}

/** Headers a request built from the INVITE keeps unchanged: the top Via, Route, From, Call-ID. */
function requestLike(invite: SipRequest, method: string, to: string): SipRequest {
  const headers = new SipHeaders();
  headers.append('Via', invite.headers.get('Via') ?? '');
  for (const route of invite.headers.getAll('Route')) headers.append('Route', route);
  headers.append('Max-Forwards', '70');
  headers.append('From', invite.headers.get('From') ?? '');
  headers.append('To', to);
  headers.append('Call-ID', invite.headers.get('Call-ID') ?? '');
  headers.append('CSeq', `${cseqOf(invite)?.seq ?? 0} ${method}`);
  return { method, uri: invite.uri, version: 'SIP/2.0', headers, body: Buffer.alloc(0) };
}

/** The ACK for a non-2xx final response (§17.1.1.3): same branch, the response's To tag. */
export const buildNon2xxAck = (invite: SipRequest, response: SipResponse) =>
  requestLike(invite, 'ACK', response.headers.get('To') ?? '');

/** The CANCEL for an INVITE (§9.1). The UA may add a Reason header before passing it to `cancel`. */
export const buildCancel = (invite: SipRequest) =>
  requestLike(invite, 'CANCEL', invite.headers.get('To') ?? '');

/**
 * The server transaction key (§17.2.3): ACK and CANCEL find their INVITE by passing 'INVITE'.
 * Null when the request has no usable Via (the parser does not let such a request through).
 */
function serverKey(request: SipRequest, method: string): string | null {
  const top = request.headers.get('Via');
  const via = top === undefined ? null : parseVia(top);
  if (!via || top === undefined) return null;
  if (via.branch?.startsWith(MAGIC_COOKIE)) {
    return `${via.branch}|${via.host.toLowerCase()}:${via.port ?? 5060}|${method}`;
  }
  const cseq = cseqOf(request);
  const fromTag = tagOf(request.headers.get('From')) ?? '';
  return `2543|${request.uri}|${fromTag}|${request.headers.get('Call-ID')}|${cseq?.seq}|${method}|${top}`;
}

const clientKey = (branch: string, method: string) => `${branch}|${method}`;

export function createTransactionLayer(options: TransactionLayerOptions): TransactionLayer {
  const { transport, timers, logger } = options;
  const T1 = options.t1 ?? 500;
  const T2 = options.t2 ?? 4_000;
  const T4 = options.t4 ?? 5_000;
  const inviteLimitMs = options.inviteLimitMs ?? 180_000;
  const timerD = options.timerD ?? TIMER_D_MS;
  const tryingDelayMs = options.tryingDelayMs ?? TRYING_DELAY_MS;
  if (!Number.isFinite(tryingDelayMs) || tryingDelayMs < 0)
    throw new Error(`tryingDelayMs must be 0 or more (got ${tryingDelayMs})`);
  const clients = new Map<string, ClientTx>();
  const servers = new Map<string, ServerTx>();
  const stats: TransactionStats = {
    clientTransactions: 0,
    serverTransactions: 0,
    clientCreated: 0,
    serverCreated: 0,
    retransmissions: 0,
    absorbed: 0,
    timeouts: 0,
    transportErrors: 0,
    strayResponses: 0,
    acksToTu: 0,
    droppedResponses: 0,
    callbackErrors: 0,
  };
  let requestHandler: ((request: SipRequest, transaction: ServerTransaction) => void) | undefined;
  let ackHandler: ((ack: SipRequest, source: SipEndpoint) => void) | undefined;
  let strayHandler: ((response: SipResponse, source: SipEndpoint) => void) | undefined;

  /** Calls the TU: a throwing TU costs a log line, never the transaction machinery. */
  const safely = (what: string, call: () => void) => {
    try {
      call();
    } catch (error) {
      stats.callbackErrors++;
      logger?.warn({ err: error, callback: what }, 'SIP transaction user callback threw');
    }
  };

  /** Named timers of one transaction, all cancelled when it terminates. */
  class TimerSet {
    private readonly active = new Map<string, () => void>();
    set(name: string, ms: number, fire: () => void) {
      this.clear(name);
      this.active.set(
        name,
        timers.set(ms, () => {
          this.active.delete(name);
          fire();
        }),
      );
    }
    clear(name: string) {
      this.active.get(name)?.();
      this.active.delete(name);
    }
    clearAll() {
      for (const cancel of this.active.values()) cancel();
      this.active.clear();
    }
  }

  class ClientTx implements ClientTransaction {
    state: ClientState;
    flow: SipEndpoint | undefined;
    readonly method: string;
    private reliable: boolean;
    private interval = T1;
    private readonly timers = new TimerSet();
    private pendingCancel: { handlers: Partial<ClientHandlers>; request?: SipRequest } | undefined;
    private cancelSent = false;

    constructor(
      readonly request: SipRequest,
      readonly branch: string,
      private readonly key: string,
      private readonly destination: SipEndpoint,
      private readonly handlers: ClientHandlers,
    ) {
      this.method = request.method;
      this.reliable = destination.protocol === 'tcp';
      this.state = isInvite(this.method) ? 'calling' : 'trying';
    }

    start() {
      this.transmit(true);
      if (!this.reliable) this.timers.set('retransmit', T1, () => this.retransmitTimer());
      this.timers.set('timeout', 64 * T1, () => this.timeout());
    }

    private transmit(initial: boolean) {
      const target = initial ? this.destination : this.flow;
      // A retransmission due before the first send resolved (slow DNS) has nothing to repeat yet.
      if (!target) return;
      if (!initial) stats.retransmissions++;
      transport.send(this.request, target).then(
        (used) => {
          if (!initial) return;
          this.flow = used;
          // The transport moved an oversize request to TCP: no retransmissions on a reliable transport.
          if (used.protocol === 'tcp' && !this.reliable) {
            this.reliable = true;
            this.timers.clear('retransmit');
          }
        },
        (error) => this.transportError(error),
      );
    }

    /** Timer A (INVITE: doubles, no cap) or E (non-INVITE: doubles up to T2, T2 once Proceeding). */
    private retransmitTimer() {
      if (this.state !== 'calling' && this.state !== 'trying' && this.state !== 'proceeding') return;
      this.transmit(false);
      if (this.state === 'proceeding') this.interval = T2;
      else if (this.state === 'calling') this.interval *= 2;
      else this.interval = Math.min(this.interval * 2, T2);
      this.timers.set('retransmit', this.interval, () => this.retransmitTimer());
    }

    /** Timer B or F. */
    private timeout() {
      if (this.state !== 'calling' && this.state !== 'trying' && this.state !== 'proceeding') return;
      stats.timeouts++;
      this.fail({ status: 408, reason: `no final response to ${this.method} within ${64 * T1} ms` });
    }

    private transportError(error: unknown) {
      stats.transportErrors++;
      if (this.state === 'terminated') return;
      const before = this.state === 'calling' || this.state === 'trying' || this.state === 'proceeding';
      logger?.debug?.({ err: error, method: this.method }, 'SIP client transaction transport error');
      if (before)
        this.fail({ status: 503, reason: (error as Error)?.message ?? 'transport error', cause: error });
      else this.terminate();
    }

    private fail(failure: ClientFailure) {
      this.terminate();
      safely('onError', () => this.handlers.onError(failure));
    }

    receive(response: SipResponse, source: SipEndpoint) {
      const status = response.status;
      if (isInvite(this.method)) return this.receiveInvite(response, status, source);
      if (status < 200) {
        if (this.state === 'trying') this.state = 'proceeding';
        if (this.state === 'proceeding')
          safely('onProvisional', () => this.handlers.onProvisional?.(response));
        else stats.absorbed++;
        return;
      }
      if (this.state !== 'trying' && this.state !== 'proceeding') {
        stats.absorbed++;
        return;
      }
      this.state = 'completed';
      this.timers.clearAll();
      safely('onFinal', () => this.handlers.onFinal(response));
      this.waitThenTerminate(this.reliable ? 0 : T4);
    }

    private receiveInvite(response: SipResponse, status: number, source: SipEndpoint) {
      const early = this.state === 'calling' || this.state === 'proceeding';
      if (status < 200) {
        if (!early) return void stats.absorbed++;
        if (this.state === 'calling') {
          this.state = 'proceeding';
          this.timers.clear('retransmit');
          this.timers.clear('timeout');
          this.timers.set('limit', inviteLimitMs, () => this.cancel());
        }
        safely('onProvisional', () => this.handlers.onProvisional?.(response));
        this.flushCancel();
        return;
      }
      if (status < 300) {
        if (early) {
          // RFC 6026 Accepted: 2xx retransmissions and other forks' 2xx keep reaching the TU.
          this.state = 'accepted';
          this.timers.clearAll();
          this.pendingCancel = undefined;
          this.timers.set('accepted', 64 * T1, () => this.terminate());
          safely('onFinal', () => this.handlers.onFinal(response));
        } else if (this.state === 'accepted') {
          safely('onFinal', () => this.handlers.onFinal(response));
        } else {
          // A fork answered 2xx after another's failure: only the UA can ACK and BYE it.
          stats.strayResponses++;
          safely('onStrayResponse', () => strayHandler?.(response, source));
        }
        return;
      }
      this.sendAck(response);
      if (!early) return void stats.absorbed++;
      this.state = 'completed';
      this.timers.clearAll();
      this.pendingCancel = undefined;
      safely('onFinal', () => this.handlers.onFinal(response));
      this.waitThenTerminate(this.reliable ? 0 : timerD);
    }

    private sendAck(response: SipResponse) {
      const target = this.flow ?? this.destination;
      transport
        .send(buildNon2xxAck(this.request, response), target)
        .catch((error) => this.transportError(error));
    }

    private waitThenTerminate(ms: number) {
      if (ms <= 0) this.terminate();
      else this.timers.set('wait', ms, () => this.terminate());
    }

    cancel(handlers: Partial<ClientHandlers> = {}, request?: SipRequest): boolean {
      if (!isInvite(this.method) || this.cancelSent || this.pendingCancel) return false;
      if (this.state !== 'calling' && this.state !== 'proceeding') return false;
      this.pendingCancel = { handlers, request };
      if (this.state === 'proceeding') this.flushCancel();
      return true;
    }

    /** §9.1: the CANCEL goes once a provisional response shows the INVITE arrived. */
    private flushCancel() {
      const pending = this.pendingCancel;
      if (!pending || this.state !== 'proceeding') return;
      this.pendingCancel = undefined;
      this.cancelSent = true;
      const cancel = pending.request ?? buildCancel(this.request);
      // Same branch and sent-by as the INVITE, whatever the UA wrote.
      cancel.headers.setFirst('Via', this.request.headers.get('Via') ?? '');
      const noop = () => {};
      startClient(cancel, this.flow ?? this.destination, {
        onProvisional: pending.handlers.onProvisional,
        onFinal: pending.handlers.onFinal ?? noop,
        onError: pending.handlers.onError ?? noop,
      });
      this.timers.clear('limit');
      this.timers.set('cancelled', 64 * T1, () => {
        if (this.state !== 'proceeding') return;
        stats.timeouts++;
        this.fail({ status: 408, reason: `no final response within ${64 * T1} ms of the CANCEL` });
      });
    }

    terminate() {
      if (this.state === 'terminated') return;
      this.state = 'terminated';
      this.timers.clearAll();
      this.pendingCancel = undefined;
      if (clients.get(this.key) === this) clients.delete(this.key);
      stats.clientTransactions = clients.size;
    }
  }

  class ServerTx implements ServerTransaction {
    state: ServerState;
    readonly method: string;
    onFailure?: (reason: ServerFailure) => void;
    private lastResponse: SipResponse | undefined;
    private readonly reliable: boolean;
    private interval = T1;
    private readonly timers = new TimerSet();

    constructor(
      readonly request: SipRequest,
      readonly branch: string,
      readonly source: SipEndpoint,
      private readonly key: string,
    ) {
      this.method = request.method;
      this.reliable = source.protocol === 'tcp';
      this.state = isInvite(this.method) ? 'proceeding' : 'trying';
    }

    start() {
      if (isInvite(this.method)) {
        // With no delay the 100 goes right after the TU's turn (`sendTrying` below), so an
        // INVITE the TU refuses on the spot gets its final response alone.
        if (tryingDelayMs > 0) this.timers.set('trying', tryingDelayMs, () => this.sendTrying());
        this.timers.set('limit', inviteLimitMs, () => {
          if (this.state !== 'proceeding') return;
          stats.timeouts++;
          this.respond(createResponse(this.request, 408, 'Request Timeout', newTag()));
          this.notify('no-response');
        });
      } else {
        this.timers.set('limit', 64 * T1, () => {
          if (this.state !== 'trying' && this.state !== 'proceeding') return;
          stats.timeouts++;
          this.terminate();
          this.notify('no-response');
        });
      }
    }

    /** 100 Trying, unless the TU already said something (§17.2.1). */
    sendTrying() {
      if (this.state === 'proceeding' && !this.lastResponse)
        this.send(createResponse(this.request, 100, 'Trying'));
    }

    private send(response: SipResponse) {
      this.lastResponse = response;
      transport.sendResponse(response, this.source).catch((error) => {
        stats.transportErrors++;
        logger?.debug?.({ err: error, method: this.method }, 'SIP server transaction transport error');
        if (this.state === 'terminated') return;
        this.terminate();
        this.notify('transport');
      });
    }

    private notify(reason: ServerFailure) {
      safely('onFailure', () => this.onFailure?.(reason));
    }

    respond(response: SipResponse): boolean {
      const status = response.status;
      if (isInvite(this.method)) {
        if (this.state === 'accepted' && status >= 200 && status < 300) {
          this.send(response);
          return true;
        }
        if (this.state !== 'proceeding') return false;
        this.send(response);
        if (status < 200) return true;
        this.timers.clearAll();
        if (status < 300) {
          this.state = 'accepted';
          this.timers.set('accepted', 64 * T1, () => this.terminate());
          return true;
        }
        this.state = 'completed';
        if (!this.reliable) this.timers.set('retransmit', T1, () => this.retransmitTimer());
        this.timers.set('timeout', 64 * T1, () => {
          stats.timeouts++;
          this.terminate();
          this.notify('no-ack');
        });
        return true;
      }
      if (this.state !== 'trying' && this.state !== 'proceeding') return false;
      this.send(response);
      if (status < 200) {
        this.state = 'proceeding';
        return true;
      }
      this.state = 'completed';
      this.timers.clearAll();
      if (this.reliable) this.terminate();
      else this.timers.set('wait', 64 * T1, () => this.terminate());
      return true;
    }

    /** Timer G: the final response again, doubling up to T2, until the ACK or timer H. */
    private retransmitTimer() {
      if (this.state !== 'completed' || !this.lastResponse) return;
      stats.retransmissions++;
      this.send(this.lastResponse);
      this.interval = Math.min(this.interval * 2, T2);
      this.timers.set('retransmit', this.interval, () => this.retransmitTimer());
    }

    /** A retransmission of the request that created this transaction. */
    receiveRetransmission() {
      stats.absorbed++;
      const resend =
        (this.state === 'proceeding' || this.state === 'completed') && this.lastResponse !== undefined;
      if (resend) {
        stats.retransmissions++;
        this.send(this.lastResponse!);
      }
    }

    /** An ACK with this INVITE's branch: absorbed after a non-2xx, the TU's after a 2xx. */
    receiveAck(ack: SipRequest, source: SipEndpoint) {
      if (this.state === 'completed') {
        this.state = 'confirmed';
        this.timers.clearAll();
        if (this.reliable) this.terminate();
        else this.timers.set('wait', T4, () => this.terminate());
        return;
      }
      if (this.state === 'confirmed') return void stats.absorbed++;
      deliverAck(ack, source);
    }

    terminate() {
      if (this.state === 'terminated') return;
      this.state = 'terminated';
      this.timers.clearAll();
      if (servers.get(this.key) === this) servers.delete(this.key);
      stats.serverTransactions = servers.size;
    }
  }

  const deliverAck = (ack: SipRequest, source: SipEndpoint) => {
    stats.acksToTu++;
    safely('onAck', () => ackHandler?.(ack, source));
  };

  function startClient(request: SipRequest, destination: SipEndpoint, handlers: ClientHandlers): ClientTx {
    if (request.method === 'ACK') throw new Error('ACK is not a transaction: send it through the transport');
    const top = request.headers.get('Via');
    let branch: string;
    if (top === undefined) {
      branch = newBranch();
      const { host, port } = transport.advertised;
      const sentBy = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      request.headers.prepend(
        'Via',
        `SIP/2.0/${destination.protocol.toUpperCase()} ${sentBy};branch=${branch}`,
      );
    } else {
      const via = parseVia(top);
      if (!via) throw new Error(`${request.method} has a malformed top Via`);
      branch = via.branch ?? newBranch();
      if (via.branch === undefined) request.headers.setFirst('Via', formatVia({ ...via, branch }));
    }
    const key = clientKey(branch, request.method);
    if (clients.has(key))
      throw new Error(`a ${request.method} transaction with branch ${branch} already exists`);
    const tx = new ClientTx(request, branch, key, destination, handlers);
    clients.set(key, tx);
    stats.clientCreated++;
    stats.clientTransactions = clients.size;
    tx.start();
    return tx;
  }

  const onResponse = (response: SipResponse, source: SipEndpoint) => {
    const vias = response.headers.getAll('Via');
    const branch = parseVia(vias[0] ?? '')?.branch;
    const cseq = cseqOf(response);
    if (vias.length !== 1 || !branch || !cseq) return void stats.droppedResponses++;
    const tx = clients.get(clientKey(branch, cseq.method));
    if (tx) return tx.receive(response, source);
    // A 2xx to an INVITE outlives its transaction (retransmitted after timer M, or a late fork).
    if (cseq.method === 'INVITE' && response.status >= 200 && response.status < 300) {
      stats.strayResponses++;
      safely('onStrayResponse', () => strayHandler?.(response, source));
      return;
    }
    stats.droppedResponses++;
  };

  const onRequest = (request: SipRequest, source: SipEndpoint) => {
    if (request.method === 'ACK') {
      const key = serverKey(request, 'INVITE');
      const tx = key === null ? undefined : servers.get(key);
      if (tx) tx.receiveAck(request, source);
      else deliverAck(request, source);
      return;
    }
    const key = serverKey(request, request.method);
    if (key === null) return;
    const existing = servers.get(key);
    if (existing) return existing.receiveRetransmission();
    const branch = parseVia(request.headers.get('Via') ?? '')?.branch ?? '';
    const tx = new ServerTx(request, branch, source, key);
    servers.set(key, tx);
    stats.serverCreated++;
    stats.serverTransactions = servers.size;
    tx.start();
    if (!requestHandler) {
      tx.respond(createResponse(request, 503, 'Service Unavailable', newTag()));
      return;
    }
    safely('onRequest', () => requestHandler?.(request, tx));
    if (tryingDelayMs === 0 && isInvite(request.method)) tx.sendTrying();
  };

  const stopListening = transport.onMessage((message, source) => {
    if (isRequest(message)) onRequest(message, source);
    else onResponse(message, source);
  });

  return {
    transport,
    request: (request, destination, handlers) => startClient(request, destination, handlers),
    onRequest(handler) {
      requestHandler = handler;
    },
    onAck(handler) {
      ackHandler = handler;
    },
    onStrayResponse(handler) {
      strayHandler = handler;
    },
    findInviteServerTransaction(cancel) {
      const key = serverKey(cancel, 'INVITE');
      const tx = key === null ? undefined : servers.get(key);
      return tx && tx.state !== 'terminated' ? tx : undefined;
    },
    size: () => clients.size + servers.size,
    stats: () => ({ ...stats, clientTransactions: clients.size, serverTransactions: servers.size }),
    close() {
      stopListening();
      for (const tx of [...clients.values()]) tx.terminate();
      for (const tx of [...servers.values()]) tx.terminate();
    },
  };
}
