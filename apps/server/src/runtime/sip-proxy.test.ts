import { randomUUID } from 'node:crypto';
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSipTestApp, type SipTestApp } from '../../test/sip-app';

/*
 * The server as a SIP worker behind Kamailio (SIP_PROXY): a UDP socket on 127.0.0.2 plays the
 * proxy, which names the caller in X-Source-Addr. The trunk's peer is a carrier address that
 * never sends a packet here itself, so an INVITE gets past screening only through that header,
 * and only when the proxy sent it. The number dialled is nobody's, so an INVITE let through
 * ends in 480 (no such number), one screened out in 403.
 */
const HOST = '127.0.0.1';
const PROXY = '127.0.0.2';
const ELSEWHERE = '127.0.0.3';
const CARRIER = '198.51.100.7';

let t: SipTestApp;

interface Reply {
  status: number;
  atMs: number;
}

/** Sends one request from `from` and collects every response to it until a final one. */
async function send(
  from: string,
  method: 'INVITE' | 'OPTIONS',
  extraHeaders: string[] = [],
): Promise<Reply[]> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, from, () => resolve()));
  const { port } = socket.address();
  const callId = randomUUID();
  const branch = `z9hG4bK${randomUUID().replaceAll('-', '')}`;
  const sipPort = t.sipPort;
  const uri = `sip:01000000000@${HOST}:${sipPort}`;
  const message = (verb: string, to: string, extra: string[]) =>
    [
      `${verb} ${uri} SIP/2.0`,
      `Via: SIP/2.0/UDP ${from}:${port};rport;branch=${branch}`,
      'Max-Forwards: 69',
      `From: <sip:13800138000@${CARRIER}>;tag=${callId.slice(0, 8)}`,
      `To: ${to}`,
      `Call-ID: ${callId}`,
      `CSeq: 1 ${verb}`,
      ...extra,
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n');
  const started = performance.now();
  const replies: Reply[] = [];
  try {
    return await new Promise<Reply[]>((resolve, reject) => {
      const giveUp = setTimeout(
        () => reject(new Error(`no final response to ${method} from ${from}: ${JSON.stringify(replies)}`)),
        10_000,
      );
      socket.on('message', (data) => {
        const text = data.toString('utf8');
        const status = Number(/^SIP\/2\.0 (\d{3})/.exec(text)?.[1]);
        replies.push({ status, atMs: performance.now() - started });
        if (status < 200) return;
        clearTimeout(giveUp);
        if (method === 'INVITE') {
          // The ACK for a non-2xx (§17.1.1.3), so the server stops retransmitting it.
          const to = /^To:\s*(.+)$/im.exec(text)?.[1]?.trim() ?? `<${uri}>`;
          socket.send(message('ACK', to, []), sipPort, HOST);
        }
        resolve(replies);
      });
      socket.send(
        message(method, `<${uri}>`, [`Contact: <sip:13800138000@${from}:${port}>`, ...extraHeaders]),
        sipPort,
        HOST,
      );
    });
  } finally {
    // Let the ACK leave before the socket goes.
    await new Promise((resolve) => setTimeout(resolve, 20));
    socket.close();
  }
}

const statuses = (replies: Reply[]) => replies.map((r) => r.status);

beforeAll(async () => {
  t = await createSipTestApp({
    name: 'sip-proxy',
    email: 'proxy@example.com',
    rtpPorts: 10,
    env: { SIP_PROXY: PROXY },
  });
  const trunk = await t.api('POST', '/trunks', {
    name: '运营商线路',
    kind: 'ip',
    signallingAddress: `${CARRIER}:5060`,
    peerAddresses: [CARRIER],
  });
  expect(trunk.status, JSON.stringify(trunk.body)).toBe(200);
  await t.untilTrunksLoaded(1);
});

afterAll(async () => {
  await t?.close();
});

describe('a SIP worker behind Kamailio (SIP_PROXY)', () => {
  it("lets in an INVITE from the proxy naming a trunk's carrier, with 100 Trying first", async () => {
    const replies = await send(PROXY, 'INVITE', [`X-Source-Addr: sip:${CARRIER}:5060`]);
    // Past screening (480: the number is nobody's), and the 100 went out before the lookup.
    expect(statuses(replies)).toEqual([100, 480]);
  });

  it('refuses the carrier named by the proxy when the packet is not the proxy’s, or a stranger named by the proxy', async () => {
    expect(statuses(await send(ELSEWHERE, 'INVITE', [`X-Source-Addr: sip:${CARRIER}:5060`]))).toEqual([403]);
    expect(statuses(await send(PROXY, 'INVITE', ['X-Source-Addr: sip:203.0.113.9:5060']))).toEqual([403]);
    expect(statuses(await send(PROXY, 'INVITE'))).toEqual([403]);
    expect(t.app.runtime.sipStats()).toMatchObject({ unattributed: 1 });
  });

  it('once draining, answers the proxy’s OPTIONS and new INVITEs 503 so it sends calls elsewhere', async () => {
    expect(statuses(await send(PROXY, 'OPTIONS'))).toEqual([200]);
    expect(t.app.runtime.drainSip('test')).toBe(true);
    expect(statuses(await send(PROXY, 'OPTIONS'))).toEqual([503]);
    expect(statuses(await send(PROXY, 'INVITE', [`X-Source-Addr: sip:${CARRIER}:5060`]))).toEqual([503]);
    expect(t.app.runtime.sipStats()).toMatchObject({ draining: 1, drained: 1 });
  });
});
