import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import {
  isRequest,
  parse,
  parseCSeq,
  parseNameAddr,
  parseVia,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './message';
import { createSipTimers } from './timers';
import {
  type ClientFailure,
  createResponse,
  createTransactionLayer,
  type ServerFailure,
  type ServerTransaction,
  type TransactionTransport,
} from './transaction';
import type { SipEndpoint } from './transport';

const T1 = 500;
const T2 = 4_000;
const T4 = 5_000;
const TIMER_D = 32_000;

const UDP_PEER: SipEndpoint = { protocol: 'udp', address: '192.0.2.20', port: 5060 };
const TCP_PEER: SipEndpoint = { protocol: 'tcp', address: '192.0.2.20', port: 5060, connectionId: 7 };

interface Sent {
  at: number;
  kind: 'request' | 'response';
  message: SipMessage;
  to: SipEndpoint | undefined;
}

/** Records what the layer hands to the transport, with the virtual time it did so. */
class FakeTransport implements TransactionTransport {
  readonly advertised = { host: '198.51.100.1', port: 5060 };
  readonly sent: Sent[] = [];
  failSends = false;
  private handler: ((message: SipMessage, source: SipEndpoint) => void) | undefined;

  constructor(private readonly clock: VirtualClock) {}

  onMessage(handler: (message: SipMessage, source: SipEndpoint) => void) {
    this.handler = handler;
    return () => {
      this.handler = undefined;
    };
  }

  send(message: SipMessage, destination: SipEndpoint) {
    this.sent.push({ at: this.clock.now(), kind: 'request', message, to: destination });
    if (this.failSends) return Promise.reject(new Error('ECONNREFUSED'));
    return Promise.resolve(destination);
  }

  sendResponse(response: SipResponse, source?: SipEndpoint) {
    this.sent.push({ at: this.clock.now(), kind: 'response', message: response, to: source });
    if (this.failSends) return Promise.reject(new Error('EPIPE'));
    return Promise.resolve(source ?? UDP_PEER);
  }

  /** A message arriving from the network. */
  deliver(message: SipMessage, source: SipEndpoint = UDP_PEER) {
    this.handler?.(message, source);
  }

  requests(method: string) {
    return this.sent.filter(
      (s) => s.kind === 'request' && isRequest(s.message) && s.message.method === method,
    );
  }

  responses(status?: number) {
    return this.sent.filter(
      (s) => s.kind === 'response' && (status === undefined || statusOf(s.message) === status),
    );
  }
}

const statusOf = (message: SipMessage) => (isRequest(message) ? 0 : message.status);

function setup(options: { inviteLimitMs?: number; tryingDelayMs?: number } = {}) {
  const clock = new VirtualClock({ startAt: 0 });
  const transport = new FakeTransport(clock);
  const layer = createTransactionLayer({
    transport,
    timers: createSipTimers(clock),
    t1: T1,
    t2: T2,
    t4: T4,
    ...options,
  });
  return { clock, transport, layer };
}

function message(text: string): SipMessage {
  const result = parse(Buffer.from(`${text.split('\n').join('\r\n')}\r\n\r\n`));
  if (!result.ok) throw new Error(result.reason);
  return result.message;
}

function request(method: string, branch: string, extra: { cseq?: number; via?: string; uri?: string } = {}) {
  const via = extra.via ?? `SIP/2.0/UDP 192.0.2.20:5060;branch=${branch}`;
  const built = message(
    [
      `${method} ${extra.uri ?? 'sip:13800138000@trunk.example.cn'} SIP/2.0`,
      `Via: ${via}`,
      'Max-Forwards: 70',
      'Route: <sip:proxy.example.cn;lr>',
      'From: "客服" <sip:02160880000@example.cn>;tag=from1',
      'To: <sip:13800138000@trunk.example.cn>',
      'Call-ID: call-1@example.cn',
      `CSeq: ${extra.cseq ?? 1} ${method}`,
      'Content-Length: 0',
    ].join('\n'),
  );
  if (!isRequest(built)) throw new Error('not a request');
  return built;
}

/** A response to `req` as the far end would send it, with a To tag. */
function reply(req: SipRequest, status: number, toTag = 'callee1'): SipResponse {
  return createResponse(req, status, 'Reason', toTag);
}

const times = (sent: Sent[]) => sent.map((s) => s.at);

/** Collects a client transaction's callbacks. */
function recorder() {
  const seen = {
    provisional: [] as number[],
    finals: [] as SipResponse[],
    errors: [] as ClientFailure[],
  };
  return {
    seen,
    handlers: {
      onProvisional: (r: SipResponse) => seen.provisional.push(r.status),
      onFinal: (r: SipResponse) => seen.finals.push(r),
      onError: (f: ClientFailure) => seen.errors.push(f),
    },
  };
}

describe('client INVITE transaction', () => {
  it('retransmits with timer A doubling without a cap, then times out at 64*T1 with a 408', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    layer.request(request('INVITE', 'z9hG4bKa1'), UDP_PEER, handlers);
    await clock.advance(31_999);
    expect(times(transport.requests('INVITE'))).toEqual([0, 500, 1_500, 3_500, 7_500, 15_500, 31_500]);
    expect(seen.errors).toEqual([]);
    await clock.advance(1);
    expect(seen.errors).toMatchObject([{ status: 408 }]);
    expect(layer.size()).toBe(0);
    await clock.advance(100_000);
    expect(transport.requests('INVITE')).toHaveLength(7);
  });

  it('stops retransmitting on a provisional and ACKs a non-2xx final itself, on the same branch', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const invite = request('INVITE', 'z9hG4bKa2');
    layer.request(invite, UDP_PEER, handlers);
    await clock.advance(600);
    transport.deliver(reply(invite, 180));
    await clock.advance(10_000);
    expect(times(transport.requests('INVITE'))).toEqual([0, 500]);
    expect(seen.provisional).toEqual([180]);

    const busy = reply(invite, 486, 'busy-tag');
    transport.deliver(busy);
    transport.deliver(busy);
    await clock.advance(0);
    expect(seen.finals.map((r) => r.status)).toEqual([486]);
    const acks = transport.requests('ACK');
    expect(acks).toHaveLength(2);
    const ack = acks[0]!.message as SipRequest;
    expect(ack.uri).toBe(invite.uri);
    expect(ack.headers.getAll('Via')).toEqual([invite.headers.get('Via')]);
    expect(parseVia(ack.headers.get('Via')!)?.branch).toBe('z9hG4bKa2');
    expect(parseNameAddr(ack.headers.get('To')!)?.params.get('tag')).toBe('busy-tag');
    expect(parseCSeq(ack.headers.get('CSeq')!)).toEqual({ seq: 1, method: 'ACK' });
    expect(ack.headers.getAll('Route')).toEqual(['<sip:proxy.example.cn;lr>']);
    expect(acks[0]!.to).toEqual(UDP_PEER);

    // Timer D keeps the transaction 32 s to answer retransmissions, then it is gone.
    await clock.advance(31_999);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
  });

  it('passes every 2xx to the TU while Accepted, forks included, and never ACKs a 2xx itself', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const strays: SipResponse[] = [];
    layer.onStrayResponse((response) => strays.push(response));
    const invite = request('INVITE', 'z9hG4bKa3');
    const tx = layer.request(invite, UDP_PEER, handlers);
    const ok = reply(invite, 200, 'fork-a');
    transport.deliver(ok);
    transport.deliver(ok);
    transport.deliver(reply(invite, 200, 'fork-b'));
    expect(tx.state).toBe('accepted');
    expect(seen.finals.map((r) => parseNameAddr(r.headers.get('To')!)?.params.get('tag'))).toEqual([
      'fork-a',
      'fork-a',
      'fork-b',
    ]);
    // A non-2xx from a third fork is ACKed and absorbed.
    transport.deliver(reply(invite, 486, 'fork-c'));
    await clock.advance(0);
    expect(seen.finals).toHaveLength(3);
    expect(transport.requests('ACK').map((s) => (s.message as SipRequest).headers.get('To'))).toEqual([
      expect.stringContaining('fork-c'),
    ]);
    await clock.advance(64 * T1 - 1);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
    // Timer M has run: a late 2xx retransmission goes to the UA, which re-ACKs it from its dialog.
    transport.deliver(ok);
    expect(strays).toHaveLength(1);
    expect(transport.requests('INVITE')).toHaveLength(1);
  });

  it('on TCP sends once, never retransmits, and ends as soon as the ACK is sent (timer D = 0)', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const invite = request('INVITE', 'z9hG4bKa4', { via: 'SIP/2.0/TCP 192.0.2.20;branch=z9hG4bKa4' });
    layer.request(invite, TCP_PEER, handlers);
    await clock.advance(20_000);
    expect(transport.requests('INVITE')).toHaveLength(1);
    transport.deliver(reply(invite, 404), TCP_PEER);
    await clock.advance(0);
    expect(seen.finals.map((r) => r.status)).toEqual([404]);
    expect(transport.requests('ACK')[0]!.to).toEqual(TCP_PEER);
    expect(layer.size()).toBe(0);
  });

  it('still times out with timer B on TCP when nothing answers', async () => {
    const { clock, layer } = setup();
    const { seen, handlers } = recorder();
    layer.request(request('INVITE', 'z9hG4bKa5'), TCP_PEER, handlers);
    await clock.advance(64 * T1);
    expect(seen.errors).toMatchObject([{ status: 408 }]);
    expect(layer.size()).toBe(0);
  });

  it('reports a transport failure as a 503 and ends', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    transport.failSends = true;
    layer.request(request('INVITE', 'z9hG4bKa6'), UDP_PEER, handlers);
    await clock.advance(0);
    expect(seen.errors).toMatchObject([{ status: 503, reason: 'ECONNREFUSED' }]);
    expect(seen.finals).toEqual([]);
    expect(layer.size()).toBe(0);
  });

  it('adds a Via with a fresh magic-cookie branch when the request has none', () => {
    const { transport, layer } = setup();
    const invite = request('INVITE', 'unused');
    invite.headers.delete('Via');
    const tx = layer.request(invite, UDP_PEER, recorder().handlers);
    expect(tx.branch).toMatch(/^z9hG4bK[\w-]{16}$/);
    expect(parseVia(invite.headers.get('Via')!)).toMatchObject({ transport: 'UDP', branch: tx.branch });
    expect(transport.sent).toHaveLength(1);
  });
});

describe('CANCEL (§9.1)', () => {
  it('waits for a provisional, then sends CANCEL on the INVITE branch; the 487 is ACKed', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const cancelFinals: number[] = [];
    const invite = request('INVITE', 'z9hG4bKc1');
    const tx = layer.request(invite, UDP_PEER, handlers);
    expect(tx.cancel({ onFinal: (r) => cancelFinals.push(r.status) })).toBe(true);
    await clock.advance(400);
    expect(transport.requests('CANCEL')).toHaveLength(0);
    transport.deliver(reply(invite, 180));
    const cancel = transport.requests('CANCEL')[0]!.message as SipRequest;
    expect(cancel.headers.getAll('Via')).toEqual([invite.headers.get('Via')]);
    expect(cancel.uri).toBe(invite.uri);
    expect(parseCSeq(cancel.headers.get('CSeq')!)).toEqual({ seq: 1, method: 'CANCEL' });
    expect(cancel.headers.get('To')).toBe(invite.headers.get('To'));
    // CANCEL is its own non-INVITE transaction: retransmitted by timer E until answered.
    await clock.advance(T1);
    expect(transport.requests('CANCEL')).toHaveLength(2);
    transport.deliver(reply(cancel, 200));
    transport.deliver(reply(invite, 487));
    await clock.advance(0);
    expect(cancelFinals).toEqual([200]);
    expect(seen.finals.map((r) => r.status)).toEqual([487]);
    expect(transport.requests('ACK')).toHaveLength(1);
    await clock.advance(TIMER_D);
    expect(layer.size()).toBe(0);
  });

  it('sends a CANCEL the UA built with the INVITE’s Via, keeping the UA’s headers', async () => {
    const { transport, layer } = setup();
    const invite = request('INVITE', 'z9hG4bKc5');
    const tx = layer.request(invite, UDP_PEER, recorder().handlers);
    transport.deliver(reply(invite, 180));
    const own = request('CANCEL', 'z9hG4bKwrong');
    own.headers.append('Reason', 'SIP;cause=487;text="主叫挂机"');
    tx.cancel({}, own);
    const sent = transport.requests('CANCEL')[0]!.message as SipRequest;
    expect(parseVia(sent.headers.get('Via')!)?.branch).toBe('z9hG4bKc5');
    expect(sent.headers.get('Reason')).toContain('主叫挂机');
    expect(tx.cancel()).toBe(false);
  });

  it('is not sent when the final response comes first', async () => {
    const { clock, transport, layer } = setup();
    const invite = request('INVITE', 'z9hG4bKc2');
    const tx = layer.request(invite, UDP_PEER, recorder().handlers);
    tx.cancel();
    transport.deliver(reply(invite, 200));
    await clock.advance(64 * T1);
    expect(transport.requests('CANCEL')).toHaveLength(0);
    expect(tx.cancel()).toBe(false);
    expect(layer.size()).toBe(0);
  });

  it('ends the INVITE with a 408 when no final response follows the CANCEL within 64*T1', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const invite = request('INVITE', 'z9hG4bKc3');
    const tx = layer.request(invite, UDP_PEER, handlers);
    transport.deliver(reply(invite, 183));
    await clock.advance(5_000);
    tx.cancel();
    await clock.advance(64 * T1 - 1);
    expect(seen.errors).toEqual([]);
    await clock.advance(1);
    expect(seen.errors).toMatchObject([{ status: 408 }]);
    expect(layer.size()).toBe(0);
  });

  it('cancels a call left ringing past the INVITE limit', async () => {
    const { clock, transport, layer } = setup({ inviteLimitMs: 60_000 });
    const invite = request('INVITE', 'z9hG4bKc4');
    layer.request(invite, UDP_PEER, recorder().handlers);
    transport.deliver(reply(invite, 180));
    await clock.advance(59_999);
    expect(transport.requests('CANCEL')).toHaveLength(0);
    await clock.advance(1);
    expect(transport.requests('CANCEL')).toHaveLength(1);
  });
});

describe('client non-INVITE transaction', () => {
  it('retransmits with timer E doubling up to T2 and times out with timer F at 64*T1', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    layer.request(request('OPTIONS', 'z9hG4bKn1'), UDP_PEER, handlers);
    await clock.advance(64 * T1);
    expect(times(transport.requests('OPTIONS'))).toEqual([
      0, 500, 1_500, 3_500, 7_500, 11_500, 15_500, 19_500, 23_500, 27_500, 31_500,
    ]);
    expect(seen.errors).toMatchObject([{ status: 408 }]);
    expect(layer.size()).toBe(0);
  });

  it('retransmits every T2 once Proceeding, passes the final once, and absorbs it for T4 (timer K)', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const bye = request('BYE', 'z9hG4bKn2');
    layer.request(bye, UDP_PEER, handlers);
    await clock.advance(600);
    transport.deliver(reply(bye, 100));
    await clock.advance(10_000);
    // 500 (E), then 1500 already due at T1*2; from Proceeding on every T2.
    expect(times(transport.requests('BYE'))).toEqual([0, 500, 1_500, 5_500, 9_500]);
    const ok = reply(bye, 200);
    transport.deliver(ok);
    transport.deliver(ok);
    expect(seen.finals).toHaveLength(1);
    expect(seen.provisional).toEqual([100]);
    await clock.advance(T4 - 1);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
    expect(transport.requests('BYE')).toHaveLength(5);
  });

  it('on TCP never retransmits and ends when the final response arrives (timer K = 0)', async () => {
    const { clock, transport, layer } = setup();
    const { seen, handlers } = recorder();
    const bye = request('BYE', 'z9hG4bKn3');
    layer.request(bye, TCP_PEER, handlers);
    await clock.advance(20_000);
    expect(transport.requests('BYE')).toHaveLength(1);
    transport.deliver(reply(bye, 200), TCP_PEER);
    expect(seen.finals).toHaveLength(1);
    expect(layer.size()).toBe(0);
  });

  it('drops responses carrying more than one Via (§8.1.3.3)', () => {
    const { transport, layer } = setup();
    const { seen, handlers } = recorder();
    const bye = request('BYE', 'z9hG4bKn4');
    layer.request(bye, UDP_PEER, handlers);
    const ok = reply(bye, 200);
    ok.headers.append('Via', 'SIP/2.0/UDP 10.0.0.1;branch=z9hG4bKother');
    transport.deliver(ok);
    expect(seen.finals).toEqual([]);
    expect(layer.stats().droppedResponses).toBe(1);
  });
});

/** Registers a TU that records requests and keeps their server transactions. */
function serverTu(layer: ReturnType<typeof setup>['layer']) {
  const got: Array<{ request: SipRequest; tx: ServerTransaction; failures: ServerFailure[] }> = [];
  const acks: SipRequest[] = [];
  layer.onRequest((request, tx) => {
    const entry = { request, tx, failures: [] as ServerFailure[] };
    tx.onFailure = (reason) => entry.failures.push(reason);
    got.push(entry);
  });
  layer.onAck((ack) => acks.push(ack));
  return { got, acks };
}

describe('server INVITE transaction', () => {
  it('sends 100 Trying when the TU has not answered within 200 ms, and re-sends it for a retransmission', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs1');
    transport.deliver(invite);
    await clock.advance(199);
    expect(transport.responses()).toHaveLength(0);
    await clock.advance(1);
    expect(times(transport.responses(100))).toEqual([200]);
    const trying = transport.responses(100)[0]!.message as SipResponse;
    expect(trying.headers.get('To')).toBe(invite.headers.get('To'));
    transport.deliver(request('INVITE', 'z9hG4bKs1'));
    expect(transport.responses(100)).toHaveLength(2);
    expect(got).toHaveLength(1);
  });

  it('sends no 100 when the TU answered first; re-sends the last provisional for retransmissions', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs2');
    transport.deliver(invite);
    got[0]!.tx.respond(reply(invite, 180));
    await clock.advance(1_000);
    transport.deliver(request('INVITE', 'z9hG4bKs2'));
    expect(transport.responses().map((s) => statusOf(s.message))).toEqual([180, 180]);
    expect(got).toHaveLength(1);
  });

  it('with tryingDelayMs 0, sends 100 Trying as soon as the TU has seen the INVITE, before any time passes', async () => {
    const { clock, transport, layer } = setup({ tryingDelayMs: 0 });
    const { got } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs0');
    transport.deliver(invite);
    expect(got).toHaveLength(1);
    expect(times(transport.responses(100))).toEqual([0]);
    expect((transport.responses(100)[0]!.message as SipResponse).headers.get('To')).toBe(
      invite.headers.get('To'),
    );
    // No second 100 from a timer; a retransmitted INVITE gets the 100 again.
    await clock.advance(1_000);
    expect(transport.responses(100)).toHaveLength(1);
    transport.deliver(request('INVITE', 'z9hG4bKs0'));
    expect(transport.responses(100)).toHaveLength(2);
    got[0]!.tx.respond(reply(invite, 200));
    expect(transport.responses().map((s) => statusOf(s.message))).toEqual([100, 100, 200]);
  });

  it('with tryingDelayMs 0, an INVITE the TU refuses on the spot gets its final response alone', async () => {
    const { clock, transport, layer } = setup({ tryingDelayMs: 0 });
    layer.onRequest((request, tx) => tx.respond(createResponse(request, 403, 'Forbidden', 'x')));
    transport.deliver(request('INVITE', 'z9hG4bKs0r'));
    await clock.advance(300);
    expect(transport.responses().map((s) => statusOf(s.message))).toEqual([403]);
  });

  it('honours a tryingDelayMs other than 200 ms, and never sends 100 to a non-INVITE', async () => {
    const { clock, transport, layer } = setup({ tryingDelayMs: 50 });
    serverTu(layer);
    transport.deliver(request('INVITE', 'z9hG4bKs0d'));
    await clock.advance(49);
    expect(transport.responses(100)).toHaveLength(0);
    await clock.advance(1);
    expect(times(transport.responses(100))).toEqual([50]);

    const immediate = setup({ tryingDelayMs: 0 });
    serverTu(immediate.layer);
    immediate.transport.deliver(request('OPTIONS', 'z9hG4bKs0o'));
    await immediate.clock.advance(1_000);
    expect(immediate.transport.responses(100)).toHaveLength(0);
  });

  it('refuses a negative or non-finite tryingDelayMs', () => {
    expect(() => setup({ tryingDelayMs: -1 })).toThrow(/tryingDelayMs/);
    expect(() => setup({ tryingDelayMs: Number.NaN })).toThrow(/tryingDelayMs/);
  });

  it('retransmits a non-2xx with timer G up to T2 until the ACK, which it absorbs; timer I ends it', async () => {
    const { clock, transport, layer } = setup();
    const { got, acks } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs3');
    transport.deliver(invite);
    got[0]!.tx.respond(reply(invite, 486));
    await clock.advance(16_000);
    expect(times(transport.responses(486))).toEqual([0, 500, 1_500, 3_500, 7_500, 11_500, 15_500]);
    transport.deliver(request('INVITE', 'z9hG4bKs3'));
    expect(transport.responses(486)).toHaveLength(8);
    const ack = request('ACK', 'z9hG4bKs3');
    transport.deliver(ack);
    transport.deliver(ack);
    expect(got[0]!.tx.state).toBe('confirmed');
    await clock.advance(T4 - 1);
    expect(transport.responses(486)).toHaveLength(8);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
    expect(acks).toEqual([]);
    expect(got[0]!.failures).toEqual([]);
  });

  it('gives up with timer H at 64*T1 when the ACK never comes, and tells the TU', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs4');
    transport.deliver(invite);
    got[0]!.tx.respond(reply(invite, 603));
    await clock.advance(64 * T1 - 1);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
    expect(got[0]!.failures).toEqual(['no-ack']);
    // After 11.5 s G fires every T2: 15.5, 19.5, 23.5, 27.5, 31.5.
    expect(times(transport.responses(603)).at(-1)).toBe(31_500);
  });

  it('in Accepted absorbs INVITE retransmissions, sends the TU’s 2xx retransmissions, passes the ACK up; timer L ends it', async () => {
    const { clock, transport, layer } = setup();
    const { got, acks } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs5');
    transport.deliver(invite);
    const ok = reply(invite, 200);
    got[0]!.tx.respond(ok);
    expect(got[0]!.tx.state).toBe('accepted');
    await clock.advance(T1);
    transport.deliver(request('INVITE', 'z9hG4bKs5'));
    expect(transport.responses(200)).toHaveLength(1);
    expect(got).toHaveLength(1);
    expect(got[0]!.tx.respond(ok)).toBe(true);
    expect(got[0]!.tx.respond(reply(invite, 486))).toBe(false);
    expect(transport.responses().map((s) => statusOf(s.message))).toEqual([200, 200]);
    // The ACK for a 2xx is its own transaction (new branch) and belongs to the dialog.
    transport.deliver(request('ACK', 'z9hG4bKack5'));
    expect(acks).toHaveLength(1);
    await clock.advance(64 * T1 - T1 - 1);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
  });

  it('on TCP does not retransmit the final response and ends on the ACK (timer I = 0)', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs6', { via: 'SIP/2.0/TCP 192.0.2.20;branch=z9hG4bKs6' });
    transport.deliver(invite, TCP_PEER);
    got[0]!.tx.respond(reply(invite, 480));
    await clock.advance(20_000);
    expect(transport.responses(480)).toHaveLength(1);
    expect(transport.responses(480)[0]!.to).toEqual(TCP_PEER);
    transport.deliver(
      request('ACK', 'z9hG4bKs6', { via: 'SIP/2.0/TCP 192.0.2.20;branch=z9hG4bKs6' }),
      TCP_PEER,
    );
    expect(layer.size()).toBe(0);
  });

  it('answers 408 itself when the TU never answers within the INVITE limit', async () => {
    const { clock, transport, layer } = setup({ inviteLimitMs: 90_000 });
    const { got } = serverTu(layer);
    transport.deliver(request('INVITE', 'z9hG4bKs7'));
    await clock.advance(90_000);
    expect(transport.responses(408)).toHaveLength(1);
    expect(got[0]!.failures).toEqual(['no-response']);
    transport.deliver(request('ACK', 'z9hG4bKs7'));
    await clock.advance(T4);
    expect(layer.size()).toBe(0);
  });

  it('matches a CANCEL to the INVITE it cancels: 200 to the CANCEL, 487 to the INVITE', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const invite = request('INVITE', 'z9hG4bKs8');
    transport.deliver(invite);
    got[0]!.tx.respond(reply(invite, 180));
    const cancel = request('CANCEL', 'z9hG4bKs8');
    transport.deliver(cancel);
    expect(got.map((g) => g.request.method)).toEqual(['INVITE', 'CANCEL']);
    const target = layer.findInviteServerTransaction(got[1]!.request);
    expect(target).toBe(got[0]!.tx);
    got[1]!.tx.respond(reply(cancel, 200));
    target!.respond(reply(invite, 487));
    expect(transport.responses().map((s) => statusOf(s.message))).toEqual([180, 200, 487]);
    // Another branch, or another sent-by, cancels nothing.
    expect(layer.findInviteServerTransaction(request('CANCEL', 'z9hG4bKzz'))).toBeUndefined();
    const elsewhere = request('CANCEL', 'z9hG4bKs8', { via: 'SIP/2.0/UDP 192.0.2.99;branch=z9hG4bKs8' });
    expect(layer.findInviteServerTransaction(elsewhere)).toBeUndefined();
    transport.deliver(request('ACK', 'z9hG4bKs8'));
    await clock.advance(64 * T1);
    expect(layer.size()).toBe(0);
  });

  it('absorbs retransmissions of an RFC 2543 request (no magic cookie)', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    transport.deliver(request('INVITE', '2543old'));
    transport.deliver(request('INVITE', '2543old'));
    expect(got).toHaveLength(1);
    got[0]!.tx.respond(reply(got[0]!.request, 404));
    transport.deliver(request('ACK', '2543old'));
    expect(got[0]!.tx.state).toBe('confirmed');
    await clock.advance(T4);
    expect(layer.size()).toBe(0);
  });

  it('answers 503 when no TU listens, and a failed send ends the transaction and tells the TU', async () => {
    const { clock, transport, layer } = setup();
    transport.deliver(request('INVITE', 'z9hG4bKs9'));
    expect(transport.responses(503)).toHaveLength(1);
    const { got } = serverTu(layer);
    transport.failSends = true;
    const invite = request('INVITE', 'z9hG4bKs10');
    transport.deliver(invite);
    got[0]!.tx.respond(reply(invite, 200));
    await clock.advance(0);
    expect(got[0]!.failures).toEqual(['transport']);
    expect(got[0]!.tx.state).toBe('terminated');
  });
});

describe('server non-INVITE transaction', () => {
  it('absorbs retransmissions while Trying, re-sends the final after it, and ends with timer J', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const options = request('OPTIONS', 'z9hG4bKo1');
    transport.deliver(options);
    transport.deliver(request('OPTIONS', 'z9hG4bKo1'));
    expect(got).toHaveLength(1);
    expect(transport.responses()).toHaveLength(0);
    got[0]!.tx.respond(reply(options, 200));
    await clock.advance(T1);
    transport.deliver(request('OPTIONS', 'z9hG4bKo1'));
    expect(transport.responses(200)).toHaveLength(2);
    expect(got[0]!.tx.respond(reply(options, 500))).toBe(false);
    await clock.advance(64 * T1 - T1 - 1);
    expect(layer.size()).toBe(1);
    await clock.advance(1);
    expect(layer.size()).toBe(0);
    // Once gone, a late retransmission is a new request to the TU.
    transport.deliver(request('OPTIONS', 'z9hG4bKo1'));
    expect(got).toHaveLength(2);
  });

  it('on TCP ends as soon as the final response is sent (timer J = 0)', () => {
    const { transport, layer } = setup();
    const { got } = serverTu(layer);
    const bye = request('BYE', 'z9hG4bKo2', { via: 'SIP/2.0/TCP 192.0.2.20;branch=z9hG4bKo2' });
    transport.deliver(bye, TCP_PEER);
    got[0]!.tx.respond(reply(bye, 200));
    expect(layer.size()).toBe(0);
  });

  it('ends after 64*T1 when the TU never answers, since the client has given up by then', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    transport.deliver(request('INFO', 'z9hG4bKo3'));
    await clock.advance(64 * T1);
    expect(got[0]!.failures).toEqual(['no-response']);
    expect(layer.size()).toBe(0);
  });
});

describe('bounded state', () => {
  it('ends with no transaction left after hundreds of mixed exchanges, answered or not', async () => {
    const { clock, transport, layer } = setup();
    const { got } = serverTu(layer);
    const outcomes = [200, 486, 0];
    for (let i = 0; i < 300; i++) {
      const invite = request('INVITE', `z9hG4bKout${i}`, { cseq: i + 1 });
      layer.request(invite, i % 2 ? TCP_PEER : UDP_PEER, recorder().handlers);
      const status = outcomes[i % 3]!;
      if (status) transport.deliver(reply(invite, status));
      transport.deliver(request(i % 2 ? 'INVITE' : 'OPTIONS', `z9hG4bKin${i}`, { cseq: i + 1 }));
    }
    got.forEach(({ request: req, tx }, i) => {
      if (i % 4 !== 3) tx.respond(reply(req, i % 4 === 0 ? 200 : 404));
    });
    expect(layer.size()).toBeGreaterThan(400);
    // The slowest: a server INVITE the TU never answers, 408 at 180 s, then timer H.
    await clock.advance(180_000 + 64 * T1);
    expect(layer.size()).toBe(0);
    expect(layer.stats()).toMatchObject({
      clientTransactions: 0,
      serverTransactions: 0,
      clientCreated: 300,
      serverCreated: 300,
    });
  });
});
