import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, VirtualClock } from '../../clock';
import { loadVad, type Vad } from '../../speech/vad';
import { MediaEngine } from '../media/media-engine';
import type { CallLeg } from '../types';
import { createSipAdapter, type LegMedia, type SipAdapter, type SipRoute } from './sip-adapter';
import { createSipStack, type SipStack } from './stack';
import type { InviteSession } from './user-agent';

/*
 * Session timers, REFER, SIP INFO keys and hold against SIPp (Debian sip-tester), whose parser
 * and scenario checks see our messages as a carrier would. The session-timer tests run our stack
 * on a virtual clock over real sockets, so 60 s of a call pass at once while SIPp answers in
 * real time.
 */

const SIPP = '/usr/bin/sipp';
const haveSipp = fs.existsSync(SIPP);
if (!haveSipp) {
  console.warn(`SIPp session tests skipped: ${SIPP} is missing (Debian package sip-tester; CI installs it).`);
}

const HOST = '127.0.0.1';
const here = path.dirname(new URL(import.meta.url).pathname);
const scenario = (name: string) => path.join(here, 'testdata', name);
const TIMERS = { t1: 100, t2: 800, t4: 200, timerD: 500 };
const OFFER =
  'v=0\r\no=- 7 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n';

let dir: string;
const sipps = new Set<ChildProcess>();

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sipp-session-'));
});
afterAll(() => {
  for (const child of sipps) child.kill('SIGKILL');
  fs.rmSync(dir, { recursive: true, force: true });
});

const freePort = () => 40000 + Math.floor(Math.random() * 20000);
const mediaPort = () => 20000 + 2 * Math.floor(Math.random() * 4000);

/** Runs one SIPp call; resolves with its exit code (0: every scenario check passed). */
function sipp(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const errors = path.join(dir, `errors-${Math.random().toString(36).slice(2)}.log`);
    const child = spawn(
      SIPP,
      [...args, '-m', '1', '-i', HOST, '-nostdin', '-timeout', '20', '-timeout_error', '-trace_err'].concat([
        '-error_file',
        errors,
      ]),
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    sipps.add(child);
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr.on('data', (chunk) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      sipps.delete(child);
      const unexpected = fs.existsSync(errors) ? fs.readFileSync(errors, 'utf8') : '';
      resolve({ code, output: `${unexpected.slice(-3000)}\n${output.slice(-2000)}` });
    });
  });
}

type SippRun = Promise<{ code: number | null; output: string }>;

/**
 * Resolves once a UDP socket is bound to `port` (SIPp is ready for our INVITE): a fixed wait is
 * too short on a loaded machine, and on a virtual clock a lost INVITE is never retransmitted.
 */
async function listening(port: number, run: SippRun): Promise<void> {
  const hex = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const bound = () =>
    ['/proc/net/udp', '/proc/net/udp6'].some((file) => {
      try {
        // The second column is the local address:port, in hex.
        const lines = fs.readFileSync(file, 'utf8').split('\n').slice(1);
        return lines.some((line) => line.trim().split(/\s+/)[1]?.endsWith(hex));
      } catch {
        return false;
      }
    });
  if (!fs.existsSync('/proc/net/udp')) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    return;
  }
  await until(bound, `SIPp listening on ${port}`, run);
}

/**
 * `step` unless SIPp ends first: a failed scenario check does not stop SIPp, it goes on with
 * what it captured, so our side may wait for a message that never comes. Its account then
 * explains the failure rather than a test timeout.
 */
function beforeSippEnds<T>(step: Promise<T>, run: SippRun): Promise<T> {
  return Promise.race([
    step,
    run.then((result) => {
      throw new Error(`SIPp ended first (exit ${result.code}):\n${result.output}`);
    }),
  ]);
}

/**
 * Waits in real time (SIPp's messages take real time) until `ready` holds; fails at once, with
 * SIPp's account, if SIPp ends first.
 */
async function until(ready: () => boolean, what: string, run: SippRun, ms = 10_000) {
  let ended: { code: number | null; output: string } | null = null;
  void run.then((result) => {
    ended = result;
  });
  const started = Date.now();
  while (!ready()) {
    if (ended) throw new Error(`SIPp ended before ${what}: ${(ended as { output: string }).output}`);
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

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
    const run = sipp([
      '-sf',
      scenario('sipp-session-timer-refreshing-caller.xml'),
      '-p',
      String(freePort()),
      '-mp',
      String(mediaPort()),
      `${HOST}:${stack.transport.local.port}`,
    ]);
    const agent = stack.agent;
    // The refresh re-INVITE (CSeq 2) was answered and its 200 ACKed.
    await until(
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
    const port = freePort();
    const run = sipp([
      '-sf',
      scenario('sipp-session-timer-callee.xml'),
      '-p',
      String(port),
      '-mp',
      String(mediaPort()),
    ]);
    const destination = { protocol: 'udp' as const, address: HOST, port };
    await listening(port, run);
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
    await until(() => session.sessionTimer !== first, 'the 200 to our refresh', run);
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
    const run = sipp([
      '-sf',
      scenario('sipp-100rel-caller.xml'),
      '-p',
      String(freePort()),
      '-mp',
      String(mediaPort()),
      `${HOST}:${stack.transport.local.port}`,
    ]);
    const result = await run;
    expect(result.code, result.output).toBe(0);
    expect(agent.stats()).toMatchObject({ ringing: 0, sessions: 0 });
  });

  it('PRACKs a callee’s reliable 183 once and takes the call it then answers', async () => {
    stack = await createSipStack({ host: HOST, port: 0, protocols: ['udp'], ...TIMERS });
    const port = freePort();
    const run = sipp([
      '-sf',
      scenario('sipp-100rel-callee.xml'),
      '-p',
      String(port),
      '-mp',
      String(mediaPort()),
    ]);
    await listening(port, run);
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
  const rtpBase = 33000 + 2 * Math.floor(Math.random() * 6000);
  let stack: SipStack;
  let engine: MediaEngine;
  let vad: Vad;
  let adapter: SipAdapter;
  const legMedia: LegMedia = { synthesize: async () => new Int16Array(1600), recognizer: null };

  beforeAll(async () => {
    stack = await createSipStack({ host: HOST, port: 0, protocols: ['udp'], ...TIMERS });
    engine = await MediaEngine.start({ rtpPortMin: rtpBase, rtpPortMax: rtpBase + 9, bindAddress: HOST });
    vad = await loadVad();
    adapter = createSipAdapter({
      stack,
      media: engine,
      vad,
      clock: systemClock,
      mediaAddress: HOST,
      recordingDir: dir,
      defaultMedia: () => legMedia,
    });
  });
  afterAll(async () => {
    await adapter?.close();
    await engine?.close();
    await stack?.close();
  });

  /** Starts SIPp as the callee and calls it through a trunk whose domain is 127.0.0.1. */
  async function callSipp(file: string, callee: string): Promise<{ leg: CallLeg; done: SippRun }> {
    const port = freePort();
    const xml = path.join(dir, path.basename(file));
    // The expected Refer-To as a regular expression: the trunk's domain, dots escaped.
    fs.writeFileSync(
      xml,
      fs.readFileSync(file, 'utf8').replaceAll('__TARGET__', 'sip:4008008000@127\\.0\\.0\\.1'),
    );
    const done = sipp(['-sf', xml, '-p', String(port), '-mp', String(mediaPort())]);
    await listening(port, done);
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
