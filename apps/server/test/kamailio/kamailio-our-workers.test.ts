import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/engine/clock';
import { loadVad, type Vad } from '../../src/engine/speech/vad';
import { MediaEngine } from '../../src/engine/telephony/media/media-engine';
import { createSipAdapter, type SipAdapter } from '../../src/engine/telephony/sip/sip-adapter';
import { createSipStack, type SipStack } from '../../src/engine/telephony/sip/stack';
import { parseSipProxyList } from '../../src/env';
import { createInviteScreen } from '../../src/runtime/sip-screen';
import { findExecutable, KamailioLab, sendSipRequest, waitFor } from './kamailio-lab';

/**
 * deploy/kamailio/kamailio.cfg in front of OUR SIP workers: two in-process SIP stacks, each with
 * its media engine and the `sip` adapter answering every call, screened as the runtime screens
 * behind SIP_PROXY. SIPp callers dial through Kamailio. What is asserted is what the callers get
 * (every INVITE answered 200) and which worker each call reached.
 *
 * Kamailio reaches the workers from a second loopback address (SIP_LISTEN_WORKERS on 127.0.0.2),
 * the workers' SIP_PROXY, while callers and the one trunk peer are on 127.0.0.1: a call is let in
 * only because the worker believes Kamailio's X-Source-Addr, never because of the packet's source.
 */

const kamailio = findExecutable('kamailio');
if (!kamailio) {
  console.warn(
    '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' +
      '!! kamailio is not installed: the tests of our workers behind Kamailio are SKIPPED. !!\n' +
      '!! Install it with `apt-get install -y kamailio` (.ci/run does) to run them.         !!\n' +
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n',
  );
}

// No database here: the suite's second run on PostgreSQL would only repeat them.
const onPostgresRun = process.env.TEST_DB === 'pg';

const HOST = '127.0.0.1';
const PROXY_SIDE = '127.0.0.2';
const STRANGER = '127.0.0.3';
// Each worker process has its own RTP range; a random base keeps parallel runs apart.
const rtpBase = 30000 + 2 * Math.floor(Math.random() * 10000);

/** One of our SIP worker processes, in this process. */
class OurWorker {
  /** SIP Call-IDs of the INVITEs that reached this worker. */
  readonly invites = new Set<string>();
  /** SIP Call-IDs this worker answered 200 (the caller's view of "who took the call"). */
  readonly answered = new Set<string>();
  /** INVITEs seen but not answered yet: a kill now would catch a call mid-answer. */
  inFlight = 0;
  /** How long the auto-answer waits before the 200: a slow database, a busy process. */
  answerDelayMs = 0;
  draining = false;
  killed = false;
  /** Answers held back by answerDelayMs, dropped when the worker goes. */
  private readonly delays = new Set<NodeJS.Timeout>();

  private constructor(
    readonly name: string,
    readonly stack: SipStack,
    readonly media: MediaEngine,
    readonly adapter: SipAdapter,
  ) {}

  get port(): number {
    return this.stack.transport.local.port;
  }

  get uri(): string {
    return `sip:${HOST}:${this.port}`;
  }

  static async start(name: string, index: number, vad: Vad, proxySocket: string, dir: string) {
    let worker!: OurWorker;
    // The adapter hands the runtime an offer synchronously from the screened INVITE's dispatch,
    // so the Call-ID the screen saw last is the offer's.
    let screenedCallId = '';
    const screening = createInviteScreen({
      clock: systemClock,
      proxies: parseSipProxyList(proxySocket) ?? [],
      trunkFor: (address) => (address === HOST ? { trunk: 'loopback carrier' } : null),
      draining: () => worker.draining,
    });
    const stack = await createSipStack({
      host: HOST,
      port: 0,
      protocols: ['udp'],
      tryingDelayMs: 0,
      agent: {
        userAgent: `CallPilot ${name}`,
        screen: (request, source) => {
          screenedCallId = request.headers.get('Call-ID') ?? '';
          worker.invites.add(screenedCallId);
          return screening.screen(request, source);
        },
        draining: () => worker.draining,
      },
    });
    const rtpMin = rtpBase + index * 100;
    const media = await MediaEngine.start({ rtpPortMin: rtpMin, rtpPortMax: rtpMin + 99, bindAddress: HOST });
    const adapter = createSipAdapter({
      stack,
      media,
      vad,
      clock: systemClock,
      mediaAddress: HOST,
      recordingDir: dir,
      defaultMedia: () => ({ synthesize: async () => new Int16Array(0), recognizer: null }),
    });
    worker = new OurWorker(name, stack, media, adapter);
    adapter.onInbound((offer) => {
      const callId = screenedCallId;
      worker.inFlight++;
      void new Promise<void>((resolve) => {
        const delay = setTimeout(() => {
          worker.delays.delete(delay);
          resolve();
        }, worker.answerDelayMs);
        worker.delays.add(delay);
      })
        .then(() => offer.answer())
        .then(
          () => {
            worker.inFlight--;
            worker.answered.add(callId);
          },
          () => {
            worker.inFlight--;
          },
        );
    });
    return worker;
  }

  /** kill -9: the sockets close and nothing more is sent, no BYE, no 503. */
  async kill(): Promise<void> {
    this.killed = true;
    this.dropDelayedAnswers();
    await this.stack.close();
    await this.media.close();
  }

  private dropDelayedAnswers() {
    for (const delay of this.delays) clearTimeout(delay);
    this.delays.clear();
  }

  async close(): Promise<void> {
    if (this.killed) return;
    this.dropDelayedAnswers();
    await this.adapter.close();
    await this.media.close();
    await this.stack.close();
  }
}

describe.skipIf(!kamailio || onPostgresRun)('Kamailio dispatcher in front of our SIP workers', () => {
  let lab: KamailioLab;
  let vad: Vad;
  let dir: string;
  let workers: OurWorker[];

  beforeAll(async () => {
    vad = await loadVad();
  });

  beforeEach(() => {
    lab = KamailioLab.create(kamailio!);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'our-workers-'));
    workers = [];
  });

  afterEach(async () => {
    await lab.close();
    await Promise.all(workers.map((worker) => worker.close()));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Two workers and Kamailio in front, reaching them from 127.0.0.2 (their SIP_PROXY). */
  async function cluster(defines: Record<string, string | number> = {}) {
    const proxySocket = `${PROXY_SIDE}:${await lab.freePort()}`;
    const a = await OurWorker.start('a', 0, vad, proxySocket, dir);
    const b = await OurWorker.start('b', 1, vad, proxySocket, dir);
    workers.push(a, b);
    const proxy = await lab.startProxy(
      [a, b].map((worker) => ({ uri: worker.uri, duid: worker.name, socket: `udp:${proxySocket}` })),
      { SIP_LISTEN_WORKERS: `udp:${proxySocket}`, ...defines },
    );
    return { a, b, proxy };
  }

  it("spreads calls over both workers, which admit the trunk's caller by X-Source-Addr and refuse a stranger", async () => {
    const { a, b, proxy } = await cluster();

    const run = await lab.placeCalls(proxy, { calls: 20, ratePerSecond: 20, holdMs: 1000 });
    expect(run.calls.size).toBe(20);
    expect(run.failedInvites(), lab.proxyLog()).toEqual([]);
    expect([...run.calls.values()].every((call) => call.bye === 200)).toBe(true);
    for (const callId of run.calls.keys()) {
      expect(a.answered.has(callId) !== b.answered.has(callId), `call ${callId}`).toBe(true);
    }
    expect(
      Math.abs(a.answered.size - b.answered.size),
      `a took ${a.answered.size}, b ${b.answered.size}`,
    ).toBeLessThanOrEqual(4);
    expect(a.adapter.activeLegs + b.adapter.activeLegs, 'every call ended on its worker').toBe(0);

    // Someone who is no trunk's peer calls through the same proxy: 403, and Kamailio does not
    // shop it around (a 4xx holds on every worker).
    const stranger = await lab.placeCalls(proxy, {
      calls: 1,
      ratePerSecond: 10,
      holdMs: 100,
      fromHost: STRANGER,
    });
    const [strangerCall] = stranger.calls.keys();
    expect(stranger.calls.get(strangerCall!)?.invite).toBe(403);
    const reached = [a, b].filter((worker) => worker.invites.has(strangerCall!));
    expect(reached).toHaveLength(1);
    expect(reached[0]!.answered.has(strangerCall!)).toBe(false);

    // A worker slower to answer than Kamailio's 1.5 s failover keeps its call: its 100 Trying
    // went out at once, so the proxy knows it is alive and sends the call nowhere else.
    a.answerDelayMs = 2500;
    b.answerDelayMs = 2500;
    const slow = await lab.placeCalls(proxy, { calls: 1, ratePerSecond: 10, holdMs: 100 });
    expect(slow.failedInvites(), lab.proxyLog()).toEqual([]);
    const [slowCall] = slow.calls.keys();
    expect([a, b].filter((worker) => worker.invites.has(slowCall!))).toHaveLength(1);
    expect(proxy.log()).not.toMatch(/retrying on/);
  });

  it('one worker killed like kill -9 during a run of calls: no new INVITE fails, the other takes them', async () => {
    const { a, b, proxy } = await cluster();

    const running = lab.placeCalls(proxy, { calls: 30, ratePerSecond: 10, holdMs: 500 });
    // At whatever moment: a call b had taken but not answered yet moves on after WORKER_ANSWER_MS
    // (the next test), still within the caller's patience.
    await waitFor(() => b.answered.size >= 3, 15_000, 'worker b to answer 3 calls');
    await b.kill();
    const answeredByB = new Set(b.answered);
    const run = await running;

    expect(run.calls.size).toBe(30);
    expect(run.failedInvites(), lab.proxyLog()).toEqual([]);
    for (const callId of run.calls.keys()) {
      expect(a.answered.has(callId) !== answeredByB.has(callId), `call ${callId}`).toBe(true);
    }
    expect(a.answered.size).toBeGreaterThan(answeredByB.size);
    // Some INVITE went to the dead worker and was moved on, not refused.
    expect(proxy.log()).toMatch(new RegExp(`retrying on ${a.uri.replaceAll('.', '\\.')}`));
    for (const callId of a.answered) expect(run.calls.get(callId)?.bye, `call ${callId}`).toBe(200);
  });

  it('a draining worker answers OPTIONS 503, gets no new calls, and finishes the calls it holds', async () => {
    const { a, b, proxy } = await cluster({ PING_INTERVAL: 1 });

    const longCalls = lab.placeCalls(proxy, { calls: 4, ratePerSecond: 20, holdMs: 5000 });
    await waitFor(() => a.answered.size + b.answered.size === 4, 10_000, 'the long calls');
    const heldByB = new Set(b.answered);
    expect(heldByB.size).toBeGreaterThan(0);

    b.draining = true;
    expect((await sendSipRequest({ host: HOST, port: b.port }, 'OPTIONS', b.uri)).status).toBe(503);
    await proxy.waitForLog(new RegExp(`worker down: ${b.uri}`), 10_000);
    expect(b.adapter.activeLegs, "b's calls are still up").toBe(heldByB.size);

    const invitesBefore = b.invites.size;
    const newCalls = await lab.placeCalls(proxy, { calls: 10, ratePerSecond: 20, holdMs: 200 });
    expect(newCalls.failedInvites(), lab.proxyLog()).toEqual([]);
    // Kamailio stopped sending it INVITEs at all (the OPTIONS 503 did it, not a 503 per call).
    expect(b.invites.size).toBe(invitesBefore);
    expect([...newCalls.calls.keys()].every((id) => a.answered.has(id))).toBe(true);

    const long = await longCalls;
    expect(long.failedInvites()).toEqual([]);
    for (const callId of heldByB) expect(long.calls.get(callId)?.bye, `call ${callId}`).toBe(200);
    expect(b.adapter.activeLegs).toBe(0);
  });

  it('a worker killed between its 100 Trying and its answer: the call moves to the other worker', async () => {
    // WORKER_ANSWER_MS shortened from its 10 s so the test stays short.
    const { a, b, proxy } = await cluster({ WORKER_ANSWER_MS: 3000 });
    a.answerDelayMs = 60_000;
    b.answerDelayMs = 60_000;

    const running = lab.placeCalls(proxy, { calls: 1, ratePerSecond: 10, holdMs: 100 });
    await waitFor(() => a.inFlight + b.inFlight === 1, 10_000, 'a worker to take the call');
    const [victim, other] = a.inFlight === 1 ? [a, b] : [b, a];
    await victim.kill();
    other.answerDelayMs = 0;
    const run = await running;

    expect(run.failedInvites(), lab.proxyLog()).toEqual([]);
    const [callId] = run.calls.keys();
    expect(other.answered).toEqual(new Set([callId]));
    expect(run.calls.get(callId!)?.bye).toBe(200);
  });
});
