import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import { parse, type SipMessage, type SipRequest, type SipResponse, serialize } from './message';
import { answerOffer, createOffer, type LocalDescription, type NegotiatedMedia } from './sdp';
import { transferTarget } from './sip-adapter';
import { createTransactionPort } from './stack';
import { createSipTimers } from './timers';
import { createTransactionLayer, type TransactionTransport } from './transaction';
import type { SipEndpoint } from './transport';
import {
  type IncomingInvite,
  type InviteOptions,
  type InviteSession,
  SipUserAgent,
  type SipUserAgentOptions,
} from './user-agent';

/*
 * Session timers, 100rel/PRACK, REFER and hold between two user agents over the real transaction
 * layer, on an in-memory network and a virtual clock: half an hour of a call passes in
 * milliseconds, and any message can be lost or edited on its way.
 */

const T1 = 500;
const CALLER = '10.0.0.1';
const CALLEE = '10.0.0.2';

class Network {
  readonly clock = new VirtualClock({ startAt: 0 });
  readonly timers = createSipTimers(this.clock);
  /** Every message as the receiver parsed it, lost ones included. */
  readonly wire: { from: string; message: SipMessage; lost: boolean }[] = [];
  /** True loses the message. */
  lose: (message: SipMessage, from: string) => boolean = () => false;
  /** Edits a message on its way (a far end with other habits). */
  edit: (message: SipMessage, from: string) => void = () => {};
  private readonly receivers = new Map<string, (message: SipMessage, source: SipEndpoint) => void>();

  agent(address: string, options: SipUserAgentOptions = {}): SipUserAgent {
    const self: SipEndpoint = { protocol: 'udp', address, port: 5060 };
    const transport: TransactionTransport = {
      advertised: { host: address, port: 5060 },
      onMessage: (handler) => {
        this.receivers.set(address, handler);
        return () => this.receivers.delete(address);
      },
      send: async (message, destination) => {
        this.carry(message, self, destination);
        return destination;
      },
      sendResponse: async (response, source) => {
        if (source) this.carry(response, self, source);
        return source ?? self;
      },
    };
    const transactions = createTransactionLayer({ transport, timers: this.timers, t1: T1 });
    return new SipUserAgent(
      createTransactionPort({ transactions, timers: this.timers, t1: T1, t2: 4000 }),
      options,
    );
  }

  private carry(message: SipMessage, from: SipEndpoint, to: SipEndpoint) {
    const parsed = parse(serialize(message));
    if (!parsed.ok) throw new Error(`unparseable message: ${serialize(message).toString()}`);
    const copy = parsed.message;
    this.edit(copy, from.address);
    const lost = this.lose(copy, from.address);
    this.wire.push({ from: from.address, message: copy, lost });
    if (!lost) queueMicrotask(() => this.receivers.get(to.address)?.(copy, from));
  }

  requests(method: string, from?: string): SipRequest[] {
    return this.wire
      .filter((entry) => !entry.lost && (from === undefined || entry.from === from))
      .map((entry) => entry.message)
      .filter((message): message is SipRequest => 'method' in message && message.method === method);
  }

  responses(method: string): SipResponse[] {
    return this.wire
      .filter((entry) => !entry.lost)
      .map((entry) => entry.message)
      .filter(
        (message): message is SipResponse =>
          'status' in message && (message.headers.get('CSeq') ?? '').endsWith(` ${method}`),
      );
  }
}

const OFFER =
  'v=0\r\no=- 1 1 IN IP4 10.0.0.1\r\ns=-\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n';
const ANSWER = OFFER.replace('10.0.0.1', '10.0.0.2').replace('10.0.0.1', '10.0.0.2').replace('4000', '4002');

function setup(options: { caller?: SipUserAgentOptions; callee?: SipUserAgentOptions } = {}) {
  const net = new Network();
  const caller = net.agent(CALLER, options.caller);
  const callee = net.agent(CALLEE, options.callee);
  const invites: IncomingInvite[] = [];
  type Answering = Promise<{ session: InviteSession }>;
  const answered: Answering[] = [];
  let onInvite: (invite: IncomingInvite) => Answering | undefined = (invite) => invite.answer(ANSWER);
  callee.onInvite((invite) => {
    invites.push(invite);
    const answering = onInvite(invite);
    if (answering) answered.push(answering);
  });
  const call = (extra: Partial<InviteOptions> = {}) =>
    caller.invite({
      uri: `sip:13800000000@${CALLEE}`,
      from: `<sip:02160881000@${CALLER}>`,
      to: `<sip:13800000000@${CALLEE}>`,
      destination: { protocol: 'udp', address: CALLEE, port: 5060 },
      sdp: OFFER,
      ...extra,
    });
  /** A call both sides confirmed. */
  const connect = async (extra: Partial<InviteOptions> = {}) => {
    const outcome = await net.clock.run(call(extra));
    if (!outcome.answered) throw new Error(`not answered: ${outcome.status}`);
    const far = await net.clock.run(answered.at(-1)!);
    return { near: outcome.session, far: far.session, response: outcome.response };
  };
  return {
    net,
    caller,
    callee,
    invites,
    call,
    connect,
    onInvite: (fn: (invite: IncomingInvite) => Answering | undefined) => {
      onInvite = fn;
    },
  };
}

/** A header's value as sent: the parser splits comma-separated lists into one value per item. */
const header = (message: SipMessage | undefined, name: string) =>
  message?.headers.getAll(name).join(', ') || undefined;

describe('session timers (RFC 4028)', () => {
  it('the caller refreshes at half the interval with an UPDATE the callee takes, and the call outlives the interval', async () => {
    const { net, connect } = setup({ caller: { sessionTimer: { interval: 90 } } });
    const { near, far, response } = await connect();
    const invite = net.requests('INVITE')[0];
    expect(header(invite, 'Session-Expires')).toBe('90');
    expect(header(invite, 'Min-SE')).toBe('90');
    expect(header(invite, 'Supported')).toBe('timer, 100rel');
    // The callee keeps the caller's 90 s (below its own 1800 s) and, the caller supporting
    // timers, makes it the refresher.
    expect(header(response, 'Session-Expires')).toBe('90;refresher=uac');
    expect(header(response, 'Require')).toBe('timer');
    expect(near.sessionTimer).toMatchObject({ interval: 90, refresher: 'local' });
    expect(far.sessionTimer).toMatchObject({ interval: 90, refresher: 'remote' });

    await net.clock.advance(44_900);
    expect(net.requests('UPDATE')).toHaveLength(0);
    await net.clock.advance(200);
    const [refresh] = net.requests('UPDATE', CALLER);
    expect(refresh?.body.length).toBe(0);
    expect(header(refresh, 'Session-Expires')).toBe('90;refresher=uac');
    expect(header(net.responses('UPDATE')[0], 'Session-Expires')).toBe('90;refresher=uac');

    await net.clock.advance(4 * 45_000);
    expect(net.requests('UPDATE', CALLER)).toHaveLength(5);
    expect(near.state).toBe('confirmed');
    expect(far.state).toBe('confirmed');
    expect(net.requests('BYE')).toHaveLength(0);
  });

  it('refreshes with a re-INVITE carrying the unchanged SDP when the far end does not allow UPDATE', async () => {
    const { net, connect } = setup({ caller: { sessionTimer: { interval: 90 } } });
    net.edit = (message, from) => {
      if (from === CALLEE && 'status' in message) message.headers.set('Allow', 'INVITE, ACK, CANCEL, BYE');
    };
    const { near } = await connect();
    await net.clock.advance(45_100);
    const reinvites = net.requests('INVITE', CALLER);
    expect(reinvites).toHaveLength(2);
    expect(reinvites[1]!.body.toString()).toBe(OFFER);
    expect(header(reinvites[1], 'Session-Expires')).toBe('90;refresher=uac');
    expect(net.requests('ACK', CALLER)).toHaveLength(2);
    expect(near.state).toBe('confirmed');
    expect(net.requests('UPDATE')).toHaveLength(0);
  });

  it('falls back to re-INVITE when the far end lists UPDATE but refuses it', async () => {
    const { net, connect } = setup({ caller: { sessionTimer: { interval: 90 } } });
    const { near } = await connect();
    // An SBC that wants an offer in every UPDATE.
    net.edit = (message, from) => {
      if (from === CALLEE && 'status' in message && message.headers.get('CSeq')?.endsWith('UPDATE')) {
        message.status = 488;
        message.reason = 'Not Acceptable Here';
      }
    };
    await net.clock.advance(45_100);
    expect(net.requests('UPDATE', CALLER)).toHaveLength(1);
    expect(net.requests('INVITE', CALLER)).toHaveLength(2);
    await net.clock.advance(45_000);
    // The timer restarted from the re-INVITE's 2xx, and UPDATE is not tried again.
    expect(net.requests('UPDATE', CALLER)).toHaveLength(1);
    expect(net.requests('INVITE', CALLER)).toHaveLength(3);
    expect(near.state).toBe('confirmed');
  });

  it('the callee hangs up with BYE when the refresh never arrives, before the interval runs out', async () => {
    const { net, connect } = setup({ caller: { sessionTimer: { interval: 90 } } });
    const { near, far } = await connect();
    net.lose = (message, from) => from === CALLER && 'method' in message && message.method === 'UPDATE';
    await net.clock.advance(59_900);
    expect(far.state).toBe('confirmed');
    await net.clock.advance(200);
    // 90 s less min(32 s, 90/3 s): the BYE reaches the caller before its own view of the session ends.
    expect(far.ended).toMatchObject({ reason: 'session_expired', at: 60_000 });
    const [bye] = net.requests('BYE', CALLEE);
    expect(header(bye, 'Reason')).toContain('SIP;cause=408');
    expect(near.ended).toMatchObject({ by: 'remote', reason: 'bye' });
  });

  it('a callee whose minimum is higher answers 422, and the caller asks again with its Min-SE', async () => {
    const { net, connect } = setup({
      caller: { sessionTimer: { interval: 90 } },
      callee: { sessionTimer: { minSE: 300 } },
    });
    const { near } = await connect();
    const invites = net.requests('INVITE', CALLER);
    expect(invites.map((invite) => header(invite, 'Session-Expires'))).toEqual(['90', '300']);
    expect(invites.map((invite) => header(invite, 'CSeq'))).toEqual(['1 INVITE', '2 INVITE']);
    expect(
      header(
        net.responses('INVITE').find((r) => r.status === 422),
        'Min-SE',
      ),
    ).toBe('300');
    expect(near.sessionTimer).toMatchObject({ interval: 300, refresher: 'local' });
  });

  it('inserts a timer for a caller without the extension and refreshes it itself, call after call', async () => {
    const { net, connect } = setup({
      caller: { sessionTimer: false },
      callee: { sessionTimer: { interval: 90 } },
    });
    const { near, far, response } = await connect();
    expect(header(net.requests('INVITE')[0], 'Supported')).toBe('100rel');
    expect(header(response, 'Session-Expires')).toBe('90;refresher=uas');
    expect(header(response, 'Require')).toBeUndefined();
    expect(near.sessionTimer).toBeNull();
    await net.clock.advance(3 * 45_000 + 100);
    // The caller's 2xx carry no Session-Expires; that does not stop a timer it never knew of.
    expect(net.requests('UPDATE', CALLEE)).toHaveLength(3);
    expect(far.state).toBe('confirmed');
    expect(near.state).toBe('confirmed');
  });
});

describe('reliable provisional responses (RFC 3262)', () => {
  it('a caller requiring 100rel gets its 183 reliably: PRACKed once despite a lost PRACK, and the 200 waits for it', async () => {
    const { net, call, onInvite, callee } = setup();
    let answer!: Promise<unknown>;
    onInvite((invite) => {
      invite.progress(183, ANSWER);
      answer = invite.answer(ANSWER);
      return undefined;
    });
    let pracks = 0;
    net.lose = (message) => 'method' in message && message.method === 'PRACK' && pracks++ === 0;
    const provisionals: SipResponse[] = [];
    const outcome = await net.clock.run(
      call({ headers: [['Require', '100rel']], onProvisional: (response) => provisionals.push(response) }),
    );
    await net.clock.run(answer);
    expect(outcome.answered).toBe(true);
    const sent183 = net.responses('INVITE').filter((response) => response.status === 183);
    // The first PRACK was lost, so the 183 went again; the caller passed it on once.
    expect(sent183.length).toBeGreaterThanOrEqual(2);
    expect(provisionals.map((response) => response.status)).toEqual([183]);
    const rseq = header(sent183[0], 'RSeq');
    expect(header(sent183[0], 'Require')).toBe('100rel');
    const [prack] = net.requests('PRACK');
    expect(header(prack, 'RAck')).toBe(`${rseq} 1 INVITE`);
    expect(net.responses('PRACK').map((response) => response.status)).toEqual([200]);
    // The 200 OK comes after the PRACK was answered, never before.
    const order = net.wire.filter((entry) => !entry.lost).map((entry) => entry.message);
    const ok = order.findIndex((m) => 'status' in m && m.status === 200 && header(m, 'CSeq') === '1 INVITE');
    const prackOk = order.findIndex(
      (m) => 'status' in m && m.status === 200 && header(m, 'CSeq')?.endsWith('PRACK'),
    );
    expect(prackOk).toBeGreaterThan(-1);
    expect(ok).toBeGreaterThan(prackOk);
    await net.clock.advance(64 * T1);
    expect(callee.stats()).toMatchObject({ ringing: 0 });
  });

  it('sends a second reliable provisional only after the first one’s PRACK, with the next RSeq; the BYE follows the PRACKs’ CSeq', async () => {
    const { net, connect, onInvite } = setup();
    onInvite((invite) => {
      invite.progress(180);
      invite.progress(183, ANSWER);
      // Answered once both went through; an answer sooner would make the queued 183 moot.
      return net.clock.sleep(3000).then(() => invite.answer(ANSWER));
    });
    const { near, far } = await connect({ headers: [['Require', '100rel']] });
    await net.clock.run(near.bye());
    const reliable = net
      .responses('INVITE')
      .filter((response) => response.status > 100 && response.status < 200);
    expect(reliable.map((response) => response.status)).toEqual([180, 183]);
    expect(Number(header(reliable[1], 'RSeq'))).toBe(Number(header(reliable[0], 'RSeq')) + 1);
    const messages = net.wire.map((entry) => entry.message);
    const prack1 = messages.findIndex((m) => 'method' in m && m.method === 'PRACK');
    const second = messages.indexOf(reliable[1]!);
    expect(second).toBeGreaterThan(prack1);
    expect(net.requests('PRACK').map((prack) => header(prack, 'CSeq'))).toEqual(['2 PRACK', '3 PRACK']);
    // A far end that counted the PRACKs refuses a BYE numbered below them (500).
    expect(header(net.requests('BYE')[0], 'CSeq')).toBe('4 BYE');
    expect(far.ended).toMatchObject({ by: 'remote', reason: 'bye' });
  });

  it('fails the INVITE with 500 when no PRACK comes within 64·T1, and forgets the call', async () => {
    const { net, call, onInvite, callee, invites } = setup();
    onInvite((invite) => {
      invite.progress(180);
      return undefined;
    });
    net.lose = (message) => 'method' in message && message.method === 'PRACK';
    const outcome = await net.clock.run(call({ headers: [['Require', '100rel']] }));
    expect(outcome).toMatchObject({ answered: false, status: 500 });
    expect(net.clock.now()).toBe(64 * T1);
    expect(invites[0]!.cancelled.signal.aborted).toBe(true);
    // T1, 2·T1, 4·T1, ... up to 64·T1: six retransmissions after the first.
    expect(net.responses('INVITE').filter((response) => response.status === 180)).toHaveLength(7);
    await net.clock.advance(64 * T1);
    expect(callee.stats()).toMatchObject({ ringing: 0, sessions: 0 });
  });

  it('forgets a reliably ringing call the transaction layer gave up on (408 after its limit)', async () => {
    const { net, call, onInvite, callee, invites } = setup();
    onInvite((invite) => {
      invite.progress(180);
      return undefined;
    });
    const outcome = await net.clock.run(call({ headers: [['Require', '100rel']] }));
    expect(outcome).toMatchObject({ answered: false, status: 408 });
    expect(invites[0]!.cancelled.signal.aborted).toBe(true);
    await net.clock.advance(64 * T1);
    expect(callee.stats()).toMatchObject({ ringing: 0 });
  });

  it('answers an INVITE requiring an extension it lacks with 420 listing it', async () => {
    const { net, call } = setup();
    const outcome = await net.clock.run(call({ headers: [['Require', '100rel, precondition']] }));
    expect(outcome).toMatchObject({ answered: false, status: 420 });
    if (!outcome.answered) expect(header(outcome.response, 'Unsupported')).toBe('precondition');
  });
});

describe('blind transfer with REFER (RFC 3515)', () => {
  /** The far end takes the REFER (202) and reports the target's call in NOTIFYs. */
  function transferee(far: InviteSession, net: Network, statuses: string[], hangUpFirst = false) {
    far.handlers.onRequest = (request) => {
      if (request.method !== 'REFER') return 405;
      queueMicrotask(async () => {
        if (hangUpFirst) await far.bye();
        for (const [index, status] of statuses.entries()) {
          const last = index === statuses.length - 1;
          await far.send('NOTIFY', {
            headers: [
              ['Event', 'refer'],
              ['Subscription-State', last ? 'terminated;reason=noresource' : 'active;expires=60'],
            ],
            body: Buffer.from(`SIP/2.0 ${status}\r\n`),
            contentType: 'message/sipfrag',
          });
          await net.clock.advance(1000);
        }
      });
      return 202;
    };
  }

  it('sends REFER with Refer-To and Referred-By, follows NOTIFY 100 then 200, and reports success', async () => {
    const { net, connect } = setup();
    const { near, far } = await connect();
    transferee(far, net, ['100 Trying', '200 OK']);
    const outcome = await net.clock.run(near.refer('sip:4008008000@10.0.0.2'));
    expect(outcome).toEqual({ ok: true, status: 200, detail: '转接成功（200 OK）' });
    const [refer] = net.requests('REFER');
    expect(header(refer, 'Refer-To')).toBe('<sip:4008008000@10.0.0.2>');
    expect(header(refer, 'Referred-By')).toBe('<sip:02160881000@10.0.0.1>');
    expect(net.responses('NOTIFY').map((response) => response.status)).toEqual([200, 200]);
  });

  it('sends a transfer number to the trunk’s domain, or else to the far end’s, as digits', async () => {
    const { connect } = setup();
    const { near, far } = await connect();
    expect(transferTarget('400-800-8000', near, 'carrier.example.cn')).toBe(
      'sip:4008008000@carrier.example.cn',
    );
    // An inbound call knows no trunk domain: the caller's domain it is.
    expect(transferTarget(' 139 0000 0000 ', far)).toBe(`sip:13900000000@${CALLER}`);
    expect(transferTarget('sip:desk@pbx.example.cn', far)).toBe('sip:desk@pbx.example.cn');
  });

  it('reports a busy transfer target from its sipfrag, and the call goes on', async () => {
    const { net, connect } = setup();
    const { near, far } = await connect();
    transferee(far, net, ['100 Trying', '486 Busy Here']);
    const outcome = await net.clock.run(near.refer('sip:4008008000@10.0.0.2'));
    expect(outcome).toMatchObject({ ok: false, status: 486, detail: '转接目标未接通（486 Busy Here）' });
    expect(near.state).toBe('confirmed');
  });

  it('says the line cannot transfer when the far end refuses REFER', async () => {
    const { net, connect } = setup();
    const { near } = await connect();
    const outcome = await net.clock.run(near.refer('sip:4008008000@10.0.0.2'));
    expect(outcome).toEqual({
      ok: false,
      status: 405,
      refused: true,
      detail: '线路不支持转接（REFER 被拒绝）',
    });
    expect(near.state).toBe('confirmed');
  });

  it('still takes the NOTIFYs of an accepted transfer after the far end hung up the call', async () => {
    const { net, connect, caller } = setup();
    const { near, far } = await connect();
    transferee(far, net, ['200 OK'], true);
    const outcome = await net.clock.run(near.refer('sip:4008008000@10.0.0.2'));
    expect(near.ended).toMatchObject({ by: 'remote', reason: 'bye' });
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    expect(caller.stats()).toMatchObject({ sessions: 0 });
  });
});

describe('hold from our side', () => {
  it('re-offers sendonly with the next o= version, hands the answer’s media over, and unholds with sendrecv', async () => {
    const { net, connect, onInvite } = setup();
    const ours = createOffer({ address: CALLER, port: 4000, codecs: ['PCMA'] });
    let theirs: LocalDescription | undefined;
    onInvite((invite) => {
      const answered = answerOffer(invite.request.body.toString(), { address: CALLEE, port: 4002 });
      if (!answered.ok) throw new Error(answered.reason);
      theirs = answered.local;
      return invite.answer(answered.sdp);
    });
    const { near, far } = await connect({ sdp: ours.sdp });
    far.handlers.onOffer = (sdp) => {
      const answered = answerOffer(sdp, { address: CALLEE, port: 4002, previous: theirs });
      if (!answered.ok) return null;
      theirs = answered.local;
      return answered.sdp;
    };
    near.description = ours;
    const media: NegotiatedMedia[] = [];
    near.handlers.onMedia = (negotiated) => media.push(negotiated);

    const held = await net.clock.run(near.hold());
    expect(held.ok).toBe(true);
    expect(near.onHold).toBe(true);
    const holdOffer = net.requests('INVITE', CALLER)[1]!.body.toString();
    expect(holdOffer).toContain('a=sendonly');
    expect(holdOffer).toMatch(new RegExp(`^o=- ${ours.sessionId} 2 `, 'm'));
    expect(far.remoteSdp).toContain('a=sendonly');
    expect(media.at(-1)).toMatchObject({ direction: 'sendonly', remotePort: 4002 });

    const unheld = await net.clock.run(near.unhold());
    expect(unheld.ok).toBe(true);
    expect(near.onHold).toBe(false);
    expect(net.requests('INVITE', CALLER)[2]!.body.toString()).toMatch(
      new RegExp(`^o=- ${ours.sessionId} 3 [\\s\\S]*a=sendrecv`, 'm'),
    );
    expect(media.at(-1)).toMatchObject({ direction: 'sendrecv' });
  });
});
