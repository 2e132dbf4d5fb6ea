import dgram from 'node:dgram';
import type { TrunkTestEvent } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSipTestApp, type SipTestApp } from '../../test/sip-app';

/*
 * The SIP runtime's side of 线路管理 against a scripted far end on loopback (no SIPp needed): a new
 * trunk is pinged at once, and 测试呼叫 reports each response, the 100 Trying included. The
 * answered case, with a real SIPp and the console, is e2e/tests/trunks.test.ts.
 */
const HOST = '127.0.0.1';

let t: SipTestApp;
let url: string;
let headers: Record<string, string>;
let farEnd: dgram.Socket;
const received: string[] = [];

/** A carrier that answers OPTIONS with 200 and every INVITE with 100 Trying then 486 (Q.850 17). */
function startFarEnd(): Promise<dgram.Socket> {
  const socket = dgram.createSocket('udp4');
  const reply = (request: string, statusLine: string, extra: string[], to: dgram.RemoteInfo) => {
    const lines = request.split('\r\n');
    const copied = lines.filter((line) => /^(Via|From|Call-ID|CSeq):/i.test(line));
    const toHeader = lines.find((line) => /^To:/i.test(line)) ?? 'To: <sip:unknown@invalid>';
    const response = [
      `SIP/2.0 ${statusLine}`,
      ...copied,
      statusLine.startsWith('100') ? toHeader : `${toHeader};tag=far-end`,
      ...extra,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
    socket.send(response, to.port, to.address);
  };
  socket.on('message', (data, from) => {
    const message = data.toString('utf8');
    const method = message.slice(0, message.indexOf(' '));
    received.push(method);
    if (method === 'OPTIONS') reply(message, '200 OK', [], from);
    if (method === 'INVITE') {
      reply(message, '100 Trying', [], from);
      reply(message, '486 Busy Here', ['Reason: Q.850;cause=17;text="User busy"'], from);
    }
  });
  return new Promise((resolve) => socket.bind(0, HOST, () => resolve(socket)));
}

beforeAll(async () => {
  farEnd = await startFarEnd();
  t = await createSipTestApp({ name: 'sip-runtime', email: 'trunk-test@example.com', rtpPorts: 10 });
  url = `/api/project/${t.projectId}/trunks`;
  headers = t.headers;
});

afterAll(async () => {
  await t?.close();
  farEnd?.close();
});

describe('trunks on the SIP runtime', () => {
  it('pings a new IP trunk at once and places a 测试呼叫 that reports 100, then 486 as 忙线', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url,
      headers,
      payload: {
        name: '脚本对端',
        kind: 'ip',
        signallingAddress: `${HOST}:${(farEnd.address() as { port: number }).port}`,
        peerAddresses: [HOST],
      },
    });
    expect(created.statusCode, created.body).toBe(200);
    const trunkId = created.json().data.id as string;

    // Reachable well before the 30 s ping round: the trunk was pinged when it was added.
    let state = '';
    for (let i = 0; i < 100 && state !== 'reachable'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      state = (await t.app.inject({ method: 'GET', url: `${url}/${trunkId}/status`, headers })).json().data
        .state;
    }
    expect(state).toBe('reachable');

    const res = await t.app.inject({
      method: 'POST',
      url: `${url}/${trunkId}/test-call`,
      headers,
      payload: { number: '13800138000' },
    });
    const events = res.body
      .split('\n\n')
      .filter((chunk) => chunk.startsWith('data: '))
      .map((chunk) => JSON.parse(chunk.slice('data: '.length)) as TrunkTestEvent);
    const steps = events.flatMap((event) =>
      event.type === 'step'
        ? [[event.step.direction, event.step.message, event.step.status, event.step.note]]
        : [],
    );
    expect(steps).toEqual([
      ['out', `INVITE sip:13800138000@${HOST}`, null, '发起呼叫'],
      ['in', '100 Trying', 100, '线路已受理'],
      ['in', '486 Busy Here', 486, '忙线'],
    ]);
    expect(events.at(-1)).toEqual({
      type: 'done',
      ok: false,
      message: '忙线，对端返回 486 Busy Here（Q.850 原因 17 User busy）',
    });
    // The far end got the ACK of its 486 (RFC 3261 §17.1.1.3).
    await expect.poll(() => received.includes('ACK')).toBe(true);
  });
});
