import { afterEach, describe, expect, it } from 'vitest';
import { createSipStack, type SipStack } from './stack';
import type { SipEndpoint } from './transport';
import type { IncomingInvite } from './user-agent';

// Short timers: transactions must drain within the test, and the numbers stay RFC-shaped.
const TIMERS = { t1: 20, t2: 160, t4: 100, timerD: 200 };
const OFFER =
  'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 8\r\n';
const ANSWER = OFFER.replace('4000', '4002');

const stacks: SipStack[] = [];
afterEach(async () => {
  await Promise.all(stacks.splice(0).map((stack) => stack.close()));
});

async function pair() {
  const caller = await createSipStack({ host: '127.0.0.1', port: 0, protocols: ['udp'], ...TIMERS });
  const callee = await createSipStack({ host: '127.0.0.1', port: 0, protocols: ['udp'], ...TIMERS });
  stacks.push(caller, callee);
  const to: SipEndpoint = { protocol: 'udp', address: '127.0.0.1', port: callee.transport.local.port };
  const invites: IncomingInvite[] = [];
  let onInvite: (invite: IncomingInvite) => void = () => {};
  callee.agent.onInvite((invite) => {
    invites.push(invite);
    onInvite(invite);
  });
  const call = (signal?: AbortSignal) =>
    caller.agent.invite({
      uri: `sip:13800000000@127.0.0.1:${to.port}`,
      from: '<sip:02160881000@127.0.0.1>',
      to: `<sip:13800000000@127.0.0.1:${to.port}>`,
      destination: to,
      sdp: OFFER,
      signal,
    });
  return { caller, callee, call, invites, setHandler: (fn: typeof onInvite) => (onInvite = fn) };
}

const drained = async (stack: SipStack) => {
  for (let i = 0; i < 200 && stack.stats().transactions > 0; i++) await new Promise((r) => setTimeout(r, 20));
  return stack.stats();
};

describe('SIP user agent on loopback', () => {
  it('places a call the far end answers; the ACK arrives, BYE ends it on both sides, nothing is left', async () => {
    const { caller, callee, call, setHandler } = await pair();
    let acked: Promise<unknown> = Promise.resolve();
    setHandler((invite) => {
      expect(invite.request.body.toString()).toBe(OFFER);
      invite.progress(180);
      acked = invite.answer(ANSWER);
    });
    const outcome = await call();
    if (!outcome.answered) throw new Error(`not answered: ${outcome.status}`);
    expect(outcome.session.remoteSdp).toBe(ANSWER);
    const { session: far } = (await acked) as { session: import('./user-agent').InviteSession };
    expect(callee.agent.stats().retransmits).toBe(0);

    await outcome.session.bye();
    const end = await far.whenEnded;
    expect(end).toMatchObject({ by: 'remote', reason: 'bye' });
    expect(outcome.session.ended).toMatchObject({ by: 'local' });
    expect(await drained(caller)).toMatchObject({ transactions: 0, sessions: 0, ringing: 0, retransmits: 0 });
    expect(await drained(callee)).toMatchObject({ transactions: 0, sessions: 0, ringing: 0, retransmits: 0 });
  });

  it('reports a busy callee with its status and reason', async () => {
    const { call, setHandler } = await pair();
    setHandler((invite) => invite.reject(486, 'Busy Here', [['Reason', 'Q.850;cause=17']]));
    const outcome = await call();
    expect(outcome).toMatchObject({ answered: false, status: 486, cancelled: false });
    if (!outcome.answered) expect(outcome.response?.headers.get('Reason')).toBe('Q.850;cause=17');
  });

  it('cancels a ringing call: the callee sees the CANCEL, the caller gets 487', async () => {
    const { callee, call, setHandler } = await pair();
    const abort = new AbortController();
    let cancelled: Promise<void> = Promise.resolve();
    setHandler((invite) => {
      invite.progress(180);
      cancelled = new Promise((resolve) =>
        invite.cancelled.signal.addEventListener('abort', () => resolve()),
      );
      setTimeout(() => abort.abort(), 30);
    });
    const outcome = await call(abort.signal);
    expect(outcome).toMatchObject({ answered: false, status: 487, cancelled: true });
    await cancelled;
    expect(await drained(callee)).toMatchObject({ transactions: 0, ringing: 0 });
  });

  it('answers a hold re-INVITE with the leg’s answer, and the far end can hang up', async () => {
    const { call, setHandler } = await pair();
    let acked!: Promise<{ session: import('./user-agent').InviteSession }>;
    setHandler((invite) => {
      acked = invite.answer(ANSWER);
    });
    const outcome = await call();
    if (!outcome.answered) throw new Error('not answered');
    const offers: string[] = [];
    outcome.session.handlers.onOffer = (sdp) => {
      offers.push(sdp);
      return OFFER.replace('1 1 IN', '1 2 IN').concat('a=recvonly\r\n');
    };
    const { session: far } = await acked;
    const hold = `${ANSWER.replace('1 1 IN', '1 2 IN')}a=sendonly\r\n`;
    const response = await far.reoffer(hold);
    expect(response.status).toBe(200);
    expect(offers).toEqual([hold]);
    expect(far.remoteSdp).toContain('a=recvonly');
    await far.bye();
    expect(await outcome.session.whenEnded).toMatchObject({ by: 'remote', reason: 'bye' });
  });

  it('answers OPTIONS with 200, or 503 while draining', async () => {
    const { caller, callee } = await pair();
    const target = `sip:ping@127.0.0.1:${callee.transport.local.port}`;
    const destination: SipEndpoint = {
      protocol: 'udp',
      address: '127.0.0.1',
      port: callee.transport.local.port,
    };
    expect((await caller.agent.ping(target, destination, '<sip:monitor@127.0.0.1>')).status).toBe(200);
    const draining = await createSipStack({
      host: '127.0.0.1',
      port: 0,
      protocols: ['udp'],
      ...TIMERS,
      agent: { draining: () => true },
    });
    stacks.push(draining);
    const result = await caller.agent.ping(
      target,
      { ...destination, port: draining.transport.local.port },
      '<sip:m@h>',
    );
    expect(result.status).toBe(503);
  });

  it('answers requests for dialogs it does not know with 481', async () => {
    const { caller, call, setHandler } = await pair();
    setHandler((invite) => void invite.answer(ANSWER));
    const outcome = await call();
    if (!outcome.answered) throw new Error('not answered');
    // Forget the callee's side, then send an INFO in the dialog it no longer has.
    const { session } = outcome;
    stacks[1]!.agent.forget(
      [...(stacks[1]!.agent as unknown as { sessions: Map<string, never> }).sessions.values()][0]!,
    );
    const response = await session
      .send('INFO', {
        body: Buffer.from('Signal=1\r\nDuration=160\r\n'),
        contentType: 'application/dtmf-relay',
      })
      .catch(() => null);
    expect(response?.status).toBe(481);
    expect(session.state).toBe('ended');
    void caller;
  });
});
