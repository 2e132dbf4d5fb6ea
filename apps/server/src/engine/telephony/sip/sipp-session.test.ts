import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import type { CallLeg } from '../types';
import { type LoopbackAdapter, startLoopbackAdapter } from './adapter-test-support';
import type { LegMedia, SipAdapter, SipRoute } from './sip-adapter';
import {
  beforeSippEnds,
  fillScenario,
  freeMediaPort,
  freeUdpPort,
  killSipps,
  runSipp,
  type SippOptions,
  type SippRun,
  sippOrWarn,
  untilOrSippEnds,
  untilSippListens,
} from './sipp-test-support';
import { createSipStack, type SipStack } from './stack';
import type { InviteSession } from './user-agent';

/*
 * Session timers, REFER, SIP INFO keys and hold against SIPp (Debian sip-tester), whose parser
 * and scenario checks see our messages as a carrier would. The session-timer tests run our stack
 * on a virtual clock over real sockets, so 60 s of a call pass at once while SIPp answers in
 * real time.
 */

const haveSipp = sippOrWarn('SIPp session tests');

const HOST = '127.0.0.1';
const here = path.dirname(new URL(import.meta.url).pathname);
const scenario = (name: string) => path.join(here, 'testdata', name);
const TIMERS = { t1: 100, t2: 800, t4: 200, timerD: 500 };
const OFFER =
  'v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n';

let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-session-'));
});
afterAll(() => {
  killSipps();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** One SIPp call in the test's directory; resolves with its exit code (0: every scenario check passed). */
const sipp = (options: Omit<SippOptions, 'dir'>) => runSipp({ dir, ...options });

describe.skipIf(!haveSipp)('session timers against SIPp', () => {
  let stack: SipStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('answers a refreshing caller with its 90 s timer, takes its re-INVITE refresh, and hangs up with BYE when no second refresh comes', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    stack = await createSipStack({ host: HOST, port: 0, protocols: ['udp'], clock, ...TIMERS });
    let session: InviteSession | undefined;
    stack.agent.onInvite((invite) => {
      void invite.answer(OFFER).then((confirmed) => {
        session = confirmed.session;
      });
    });
    const run = sipp({
      scenario: scenario('sipp-session-timer-refreshing-caller.xml'),
      port: await freeUdpPort(),
      mediaPort: await freeMediaPort(),
      remote: `${HOST}:${stack.transport.local.port}`,
    });
    const agent = stack.agent;
    // The refresh re-INVITE (CSeq 2) was answered and its 200 ACKed.
    await untilOrSippEnds(
      () => session?.dialog.remoteSeq === 2 && agent.stats().retransmits === 0,
      'the refresh re-INVITE and its ACK',
      run,
    );
    expect(session!.sessionTimer).toMatchObject({ interval: 90, refresher: 'remote' });
    await clock.advance(59_000);
    expect(session!.state).toBe('confirmed');
    await clock.advance(2_000);
    expect(session!.ended).toMatchObject({ reason: 'session_expired' });
    const result = await run;
    expect(result.code, result.output).toBe(0);
  });

  it('calls a callee that makes us the refresher and refreshes at half the interval with the same SDP', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    stack = await createSipStack({
      host: HOST,
      port: 0,
      protocols: ['udp'],
      clock,
      ...TIMERS,
      agent: { sessionTimer: { interval: 90 } },
    });
    const port = await freeUdpPort();
    const run = sipp({
      scenario: scenario('sipp-session-timer-callee.xml'),
      port,
      mediaPort: await freeMediaPort(),
    });
    const destination = { protocol: 'udp' as const, address: HOST, port };
    await untilSippListens(port, run);
    const outcome = await stack.agent.invite({
      uri: `sip:timer@${HOST}:${port}`,
      from: `<sip:02160881000@${HOST}>`,
      to: `<sip:timer@${HOST}:${port}>`,
      destination,
      sdp: OFFER,
    });
    if (!outcome.answered) throw new Error(`not answered: ${outcome.status}`);
    const { session } = outcome;
    const first = session.sessionTimer;
    expect(first).toMatchObject({ interval: 90, refresher: 'local' });
    await clock.advance(44_000);
    expect(session.dialog.localSeq).toBe(1);
    await clock.advance(1_000);
    // The refresh went out; its 200 restarts the timer.
    await untilOrSippEnds(() => session.sessionTimer !== first, 'the 200 to our refresh', run);
    expect(session.sessionTimer).toMatchObject({ interval: 90, refresher: 'local' });
    expect(session.state).toBe('confirmed');
    await session.bye();
    const result = await run;
    expect(result.code, result.output).toBe(0);
  });
});

describe.skipIf(!haveSipp)('reliable provisional responses against SIPp', () => {
  let stack: SipStack | undefined;
  afterEach(async () => {
    await stack?.close();
    stack = undefined;
  });

  it('sends its 183 reliably to a caller requiring 100rel and answers only after the PRACK', async () => {
    stack = await createSipStack({ host: HOST, port: 0, protocols: ['udp'], ...TIMERS });
    const agent = stack.agent;
    agent.onInvite((invite) => {
      invite.progress(183, OFFER);
      void invite.answer(OFFER).catch(() => undefined);
    });
    const run = sipp({
      scenario: scenario('sipp-100rel-caller.xml'),
      port: await freeUdpPort(),
      mediaPort: await freeMediaPort(),
      remote: `${HOST}:${stack.transport.local.port}`,
    });
    const result = await run;
    expect(result.code, result.output).toBe(0);
    expect(agent.stats()).toMatchObject({ ringing: 0, sessions: 0 });
  });

  it('PRACKs a callee’s reliable 183 once and takes the call it then answers', async () => {
    stack = await createSipStack({ host: HOST, port: 0, protocols: ['udp'], ...TIMERS });
    const port = await freeUdpPort();
    const run = sipp({
      scenario: scenario('sipp-100rel-callee.xml'),
      port,
      mediaPort: await freeMediaPort(),
    });
    await untilSippListens(port, run);
    const provisionals: number[] = [];
    const outcome = await beforeSippEnds(
      stack.agent.invite({
        uri: `sip:reliable@${HOST}:${port}`,
        from: `<sip:02160881000@${HOST}>`,
        to: `<sip:reliable@${HOST}:${port}>`,
        destination: { protocol: 'udp', address: HOST, port },
        sdp: OFFER,
        onProvisional: (response) => provisionals.push(response.status),
      }),
      run,
    );
    if (!outcome.answered) throw new Error(`not answered: ${outcome.status}`);
    expect(provisionals).toEqual([183]);
    await outcome.session.bye();
    const result = await run;
    expect(result.code, result.output).toBe(0);
  });
});

describe.skipIf(!haveSipp)('the SIP leg’s transfer, INFO keys and hold against SIPp', () => {
  let adapter: SipAdapter;
  let loopback: LoopbackAdapter | undefined;
  const legMedia: LegMedia = { synthesize: async () => new Int16Array(1600), recognizer: null };

  beforeAll(async () => {
    loopback = await startLoopbackAdapter({
      timers: TIMERS,
      rtpPorts: 10,
      recordingDir: dir,
      defaultMedia: () => legMedia,
    });
    adapter = loopback.adapter;
  });
  afterAll(async () => {
    await loopback?.close();
  });

  /** Starts SIPp as the callee and calls it through a trunk whose domain is 127.0.0.1. */
  async function callSipp(file: string, callee: string): Promise<{ leg: CallLeg; done: SippRun }> {
    const port = await freeUdpPort();
    // The expected Refer-To as a regular expression: the trunk's domain, dots escaped.
    const xml = fillScenario(file, dir, { __TARGET__: 'sip:4008008000@127\\.0\\.0\\.1' });
    const done = sipp({ scenario: xml, port, mediaPort: await freeMediaPort() });
    await untilSippListens(port, done);
    const route: SipRoute = {
      trunkId: 't1',
      destination: { protocol: 'udp', address: HOST, port },
      domain: HOST,
      callerId: '02160881000',
      callee,
      codecs: ['PCMA', 'PCMU'],
    };
    const result = await adapter.originate({
      callId: `out-${callee}-${Date.now()}`,
      from: '02160881000',
      to: callee,
      sip: route,
      media: legMedia,
    });
    if (!result.answered) throw new Error(`not answered: ${result.outcome} ${result.detail}`);
    return { leg: result.leg, done };
  }

  it('transfers a call with REFER: the number goes to the trunk’s domain, NOTIFYs 100 then 200 report success', async () => {
    const { leg, done } = await callSipp(scenario('sipp-refer-transferee.xml'), '13800000010');
    const outcome = await beforeSippEnds(leg.transfer('400-800-8000'), done);
    expect(outcome).toEqual({ ok: true, detail: '转接成功（200 OK）' });
    await leg.hangup();
    const result = await done;
    expect(result.code, result.output).toBe(0);
  });

  it('sends keys as SIP INFO to a callee without telephone-event, holds and unholds it, and answers its hold in the same o= line', async () => {
    const { leg, done } = await callSipp(scenario('sipp-info-dtmf-hold.xml'), '13800000011');
    await beforeSippEnds(leg.sendDtmf('1#'), done);
    const sipLeg = leg as CallLeg & { hold(on: boolean): Promise<boolean> };
    expect(await beforeSippEnds(sipLeg.hold(true), done)).toBe(true);
    expect(await beforeSippEnds(sipLeg.hold(false), done)).toBe(true);
    // SIPp re-INVITEs (holding us), checks our answer and hangs up.
    expect(await beforeSippEnds(leg.whenEnded, done)).toMatchObject({ by: 'remote' });
    const result = await done;
    expect(result.code, result.output).toBe(0);
  });
});
