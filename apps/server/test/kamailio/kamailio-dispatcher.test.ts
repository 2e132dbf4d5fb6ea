import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findExecutable, KamailioLab, type LoggedMessage, waitFor } from './kamailio-lab';

/**
 * deploy/kamailio/kamailio.cfg in front of SIPp workers on loopback: what a carrier's calls
 * and the workers see when calls are spread, a worker dies, or a worker drains.
 */

const kamailio = findExecutable('kamailio');
if (!kamailio) {
  console.warn(
    '\n!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n' +
      '!! kamailio is not installed: the Kamailio dispatcher tests are SKIPPED.            !!\n' +
      '!! Install it with `apt-get install -y kamailio` (.ci/run does) to run them.         !!\n' +
      '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!\n',
  );
}

// These tests touch no database, so the suite's second run on PostgreSQL would repeat them
// for nothing but CI time.
const onPostgresRun = process.env.TEST_DB === 'pg';

// Tests that wait on health checks ping every second, so a drain shows within two seconds;
// everything else runs on the shipped defaults (pings every 3 s, 1.5 s for a worker's first
// reply to an INVITE, 3 s for a non-INVITE request).
const FAST_PINGS = { PING_INTERVAL: 1 };

describe.skipIf(!kamailio || onPostgresRun)('Kamailio dispatcher in front of SIP workers', () => {
  let lab: KamailioLab;

  beforeEach(() => {
    lab = KamailioLab.create(kamailio!);
  });

  afterEach(async () => {
    await lab.close();
  });

  it('spreads concurrent calls evenly over the workers, each call staying on its worker until the BYE', async () => {
    const a = await lab.startWorker('a');
    const b = await lab.startWorker('b');
    const proxy = await lab.startProxy([
      { uri: a.uri, duid: 'a' },
      { uri: b.uri, duid: 'b' },
    ]);

    const run = await lab.placeCalls(proxy, { calls: 20, ratePerSecond: 20, holdMs: 1000 });

    expect(run.calls.size).toBe(20);
    expect(run.failedInvites(), lab.proxyLog()).toEqual([]);
    expect([...run.calls.values()].every((call) => call.bye === 200)).toBe(true);

    const onA = a.answeredCalls();
    const onB = b.answeredCalls();
    expect([...onA].filter((id) => onB.has(id))).toEqual([]);
    expect(new Set([...onA, ...onB])).toEqual(new Set(run.calls.keys()));
    // Calls overlap (1 s each, 20 per second), so the least-loaded worker alternates.
    expect(Math.abs(onA.size - onB.size), `a took ${onA.size}, b took ${onB.size}`).toBeLessThanOrEqual(4);

    // ACK and BYE follow the Record-Route to the worker that answered, and only to it.
    for (const worker of [a, b]) {
      const answered = worker.answeredCalls();
      expect(worker.endedCalls()).toEqual(answered);
      const acked = new Set(
        worker
          .messages()
          .filter((m) => m.direction === 'received' && m.startLine.startsWith('ACK '))
          .map((m) => m.callId),
      );
      expect(acked).toEqual(answered);
    }

    // The worker learns the caller's real address, never what the caller claimed it was.
    const invites = [...a.messages(), ...b.messages()].filter(
      (m) => m.direction === 'received' && m.startLine.startsWith('INVITE '),
    );
    expect(invites).toHaveLength(20);
    for (const invite of invites) {
      expect(invite.headers.get('x-source-addr')).toEqual([`sip:127.0.0.1:${run.port}`]);
    }
  });

  it('sends new calls to the worker with fewer calls in progress', async () => {
    const a = await lab.startWorker('a');
    const b = await lab.startWorker('b');
    const proxy = await lab.startProxy([
      { uri: a.uri, duid: 'a' },
      { uri: b.uri, duid: 'b' },
    ]);

    // Held well past the end of the test, which kills it: only its load matters here.
    void lab.placeCalls(proxy, { calls: 1, ratePerSecond: 100, holdMs: 60_000 });
    await waitFor(() => a.answeredCalls().size + b.answeredCalls().size === 1, 10_000, 'the long call');
    const [busy, idle] = a.answeredCalls().size === 1 ? [a, b] : [b, a];

    // One short call at a time, each ended before the next: every one finds the busy worker at
    // 1 call and the idle one at 0. Round-robin or hashing would hand some to the busy worker.
    const shortCalls: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = await lab.placeCalls(proxy, { calls: 1, ratePerSecond: 100, holdMs: 50 });
      expect(run.failedInvites(), lab.proxyLog()).toEqual([]);
      shortCalls.push(...run.calls.keys());
    }
    expect(idle.answeredCalls(), lab.proxyLog()).toEqual(new Set(shortCalls));
    expect(busy.answeredCalls().size).toBe(1);
    expect(busy.endedCalls().size, 'the long call is still up').toBe(0);
  });

  it('a worker killed with kill -9 during a run of calls: no new INVITE fails, the other worker takes them', async () => {
    const a = await lab.startWorker('a');
    const b = await lab.startWorker('b');
    const proxy = await lab.startProxy([
      { uri: a.uri, duid: 'a' },
      { uri: b.uri, duid: 'b' },
    ]);

    const running = lab.placeCalls(proxy, { calls: 30, ratePerSecond: 10, holdMs: 500 });
    await waitFor(() => b.answeredCalls().size >= 3, 15_000, 'worker b to answer 3 calls');
    await b.kill();
    const answeredByB = b.answeredCalls();
    const run = await running;

    expect(run.calls.size).toBe(30);
    expect(run.failedInvites(), lab.proxyLog()).toEqual([]);

    // Every call was answered by exactly one worker: b before it died, a for all the rest,
    // including the calls first sent to the dead b.
    const answeredByA = a.answeredCalls();
    for (const callId of run.calls.keys()) {
      expect(answeredByA.has(callId) !== answeredByB.has(callId), `call ${callId}`).toBe(true);
    }
    expect(answeredByA.size).toBeGreaterThan(answeredByB.size);
    expect(proxy.log()).toMatch(/retrying on sip:127\.0\.0\.1:\d+/);
    // Calls that a was answering ended normally; only calls held by the dead worker lose their BYE.
    for (const callId of answeredByA) expect(run.calls.get(callId)?.bye, `call ${callId}`).toBe(200);
  });

  it('a worker answering OPTIONS with 503 gets no new calls, and the calls it holds run to their end', async () => {
    const a = await lab.startWorker('a');
    const b = await lab.startWorker('b');
    const proxy = await lab.startProxy(
      [
        { uri: a.uri, duid: 'a' },
        { uri: b.uri, duid: 'b' },
      ],
      FAST_PINGS,
    );

    // Long calls, so that some are still up on b when it drains.
    const longCalls = lab.placeCalls(proxy, { calls: 4, ratePerSecond: 20, holdMs: 5000 });
    await waitFor(() => a.answeredCalls().size + b.answeredCalls().size === 4, 10_000, 'the long calls');
    const heldByB = b.answeredCalls();
    expect(heldByB.size).toBeGreaterThan(0);

    await b.drain();
    await proxy.waitForLog(new RegExp(`worker down: ${b.uri}`), 10_000);
    expect(b.endedCalls().size, 'b was taken out before its calls ended').toBe(0);

    const newCalls = await lab.placeCalls(proxy, { calls: 10, ratePerSecond: 20, holdMs: 200 });
    expect(newCalls.failedInvites(), lab.proxyLog()).toEqual([]);
    const newIds = [...newCalls.calls.keys()];
    expect(newIds.filter((id) => b.answeredCalls().has(id))).toEqual([]);
    expect(newIds.every((id) => a.answeredCalls().has(id))).toBe(true);

    const long = await longCalls;
    expect(long.failedInvites()).toEqual([]);
    // In-dialog requests do not care that b is out of rotation: its calls end with a BYE it answers.
    expect(b.endedCalls()).toEqual(heldByB);
    for (const callId of heldByB) expect(long.calls.get(callId)?.bye, `call ${callId}`).toBe(200);
  });

  it("relays a worker's outbound call to its trunk through the proxy, and nobody else's", async () => {
    const worker = await lab.startWorker('w');
    const trunk = await lab.startWorker('trunk');
    // The process playing a worker's outbound side is listed (so the proxy knows it as a worker)
    // but disabled, so no inbound call or ping is sent to a SIPp that only places calls.
    const outboundPort = await lab.freePort();
    const proxy = await lab.startProxy([
      { uri: worker.uri, duid: 'w' },
      { uri: `sip:127.0.0.1:${outboundPort}`, duid: 'w-out', flags: 4 },
    ]);
    const trunkAddress = `127.0.0.1:${trunk.port}`;

    const outbound = await lab.placeCalls(proxy, {
      calls: 1,
      ratePerSecond: 100,
      holdMs: 100,
      target: trunkAddress,
      fromPort: outboundPort,
    });
    expect(outbound.failedInvites(), lab.proxyLog()).toEqual([]);
    const [callId] = outbound.calls.keys();
    expect(trunk.answeredCalls()).toEqual(new Set([callId]));
    expect(trunk.endedCalls()).toEqual(new Set([callId]));
    const invite = trunk
      .messages()
      .find((m) => m.direction === 'received' && m.startLine.startsWith('INVITE '));
    // The trunk sees the proxy as the caller's hop and keeps it on the dialog's route.
    expect(invite?.headers.get('via')?.[0]).toContain(`127.0.0.1:${proxy.port}`);
    expect(invite?.headers.get('record-route')?.[0]).toContain(`127.0.0.1:${proxy.port}`);
    // The header meant for workers (here the stand-in's forged one) never reaches a carrier.
    expect(invite?.headers.has('x-source-addr')).toBe(false);

    // Anyone else naming the trunk gets a worker, never the trunk: the proxy is no open relay.
    const stranger = await lab.placeCalls(proxy, {
      calls: 1,
      ratePerSecond: 100,
      holdMs: 100,
      target: trunkAddress,
    });
    expect(stranger.failedInvites()).toEqual([]);
    const [strangerCall] = stranger.calls.keys();
    expect(worker.answeredCalls().has(strangerCall!)).toBe(true);
    expect(trunk.answeredCalls().has(strangerCall!)).toBe(false);
  });

  it("with a socket on the workers' network, workers are reached from it and keep it on the route", async () => {
    const worker = await lab.startWorker('w');
    // A second loopback address stands for the private network (127.0.0.0/8 is all loopback).
    const internal = `udp:127.0.0.2:${await lab.freePort()}`;
    const proxy = await lab.startProxy([{ uri: worker.uri, duid: 'w', socket: internal }], {
      ...FAST_PINGS,
      SIP_LISTEN_WORKERS: internal,
    });

    const run = await lab.placeCalls(proxy, { calls: 2, ratePerSecond: 100, holdMs: 100 });
    expect(run.failedInvites(), lab.proxyLog()).toEqual([]);
    expect([...run.calls.values()].every((call) => call.bye === 200)).toBe(true);

    const internalHost = internal.slice('udp:'.length);
    const received = worker.messages().filter((m) => m.direction === 'received');
    const invite = received.find((m) => m.startLine.startsWith('INVITE '));
    expect(invite?.headers.get('via')?.[0]).toContain(internalHost);
    // Both sides of the proxy on the route: the worker's side first, the carriers' side after it.
    expect(invite?.headers.get('record-route')).toEqual([
      expect.stringContaining(internalHost),
      expect.stringContaining(`127.0.0.1:${proxy.port}`),
    ]);
    const bye = received.find((m) => m.startLine.startsWith('BYE '));
    expect(bye?.headers.get('via')?.[0]).toContain(internalHost);
    // And so do the health checks.
    const isPing = (m: LoggedMessage) =>
      m.direction === 'received' &&
      m.startLine.startsWith('OPTIONS ') &&
      /dispatcher@/.test(m.headers.get('from')?.[0] ?? '');
    await waitFor(() => worker.messages().some(isPing), 10_000, 'a health check');
    expect(worker.messages().find(isPing)?.headers.get('via')?.[0]).toContain(internalHost);
  });
});
