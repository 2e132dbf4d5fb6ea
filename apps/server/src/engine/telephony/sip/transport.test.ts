import dgram from 'node:dgram';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import {
  createStreamFramer,
  isRequest,
  parse,
  parseVia,
  SipHeaders,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from './message';
import { createSipTimers } from './timers';
import { createSipTransport, type SipEndpoint, type SipTransport } from './transport';

const open: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close();
});

async function transport(options: Partial<Parameters<typeof createSipTransport>[0]> = {}) {
  const created = await createSipTransport({ host: '127.0.0.1', port: 0, ...options });
  open.push(created);
  return created;
}

/** Waits for the next wake-up, failing before the 30 s test timeout when none comes (10 s: CI runs on 2 busy cores). */
function arrival(waiters: Array<() => void>, what: string) {
  return new Promise<void>((wake, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}`)), 10_000);
    waiters.push(() => {
      clearTimeout(timer);
      wake();
    });
  });
}

/** Collects what a transport delivers; `next()` waits for the following message. */
function inbox(t: SipTransport) {
  const seen: Array<{ message: SipMessage; source: SipEndpoint }> = [];
  const waiters: Array<() => void> = [];
  t.onMessage((message, source) => {
    seen.push({ message, source });
    waiters.splice(0).forEach((wake) => {
      wake();
    });
  });
  let read = 0;
  return {
    seen,
    async next() {
      while (seen.length <= read) await arrival(waiters, 'a delivered message');
      return seen[read++]!;
    },
  };
}

/** A bare UDP peer: what a phone or SIPp looks like from the transport's side. */
async function udpPeer() {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((done) => socket.bind(0, '127.0.0.1', done));
  const queue: Buffer[] = [];
  const waiters: Array<() => void> = [];
  socket.on('message', (data) => {
    queue.push(data);
    waiters.splice(0).forEach((wake) => {
      wake();
    });
  });
  const peer = {
    port: socket.address().port,
    send: (bytes: Buffer | string, port: number) =>
      new Promise<void>((done) => socket.send(bytes, port, '127.0.0.1', () => done())),
    async next(): Promise<Buffer> {
      while (queue.length === 0) await arrival(waiters, 'a datagram at the peer');
      return queue.shift()!;
    },
    close: () => new Promise<void>((done) => socket.close(() => done())),
  };
  open.push(peer);
  return peer;
}

async function waitFor(condition: () => boolean, what: string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((wake) => setTimeout(wake, 5));
  }
}

function wire(lines: string[], body = ''): Buffer {
  const head = [...lines, `Content-Length: ${Buffer.byteLength(body)}`].join('\r\n');
  return Buffer.concat([Buffer.from(`${head}\r\n\r\n`), Buffer.from(body)]);
}

const messageLines = (via: string, callId = 'c1@test') => [
  'MESSAGE sip:assistant@127.0.0.1 SIP/2.0',
  `Via: ${via}`,
  'Max-Forwards: 70',
  'From: <sip:13800138000@carrier.example.cn>;tag=f1',
  'To: <sip:assistant@127.0.0.1>',
  `Call-ID: ${callId}`,
  'CSeq: 1 MESSAGE',
  'Content-Type: text/plain;charset=utf-8',
];

function okFor(request: SipRequest, body = ''): SipResponse {
  const headers = new SipHeaders();
  for (const via of request.headers.getAll('Via')) headers.append('Via', via);
  for (const name of ['From', 'To', 'Call-ID', 'CSeq']) headers.append(name, request.headers.get(name)!);
  return { version: 'SIP/2.0', status: 200, reason: 'OK', headers, body: Buffer.from(body) };
}

function parsed(bytes: Buffer): SipMessage {
  const result = parse(bytes);
  if (!result.ok) throw new Error(result.reason);
  return result.message;
}

const asRequest = (message: SipMessage) => {
  if (!isRequest(message)) throw new Error('expected a request');
  return message;
};
const asResponse = (message: SipMessage) => {
  if (isRequest(message)) throw new Error('expected a response');
  return message;
};

describe('SIP transport over UDP', () => {
  it('fills received and rport on the top Via and answers to the source port, not the Via port', async () => {
    const t = await transport({ protocols: ['udp'] });
    const got = inbox(t);
    const phone = await udpPeer();
    // The Via names a private address and port, as a phone behind NAT writes it.
    await phone.send(
      wire(messageLines('SIP/2.0/UDP 192.168.1.20:5062;branch=z9hG4bKnat1;rport')),
      t.local.port,
    );
    const { message, source } = await got.next();
    const request = asRequest(message);
    expect(source).toEqual({ protocol: 'udp', address: '127.0.0.1', port: phone.port });
    expect(parseVia(request.headers.get('Via')!)).toMatchObject({
      host: '192.168.1.20',
      port: 5062,
      received: '127.0.0.1',
      rport: phone.port,
    });
    await t.sendResponse(okFor(request), source);
    const answer = asResponse(parsed(await phone.next()));
    expect(answer.status).toBe(200);
    expect(parseVia(answer.headers.get('Via')!)).toMatchObject({ received: '127.0.0.1', rport: phone.port });
  });

  it('adds received when the Via host differs from the source, and answers to received and the Via port', async () => {
    const t = await transport({ protocols: ['udp'] });
    const got = inbox(t);
    const phone = await udpPeer();
    await phone.send(
      wire(messageLines(`SIP/2.0/UDP phone.invalid:${phone.port};branch=z9hG4bKr1`)),
      t.local.port,
    );
    const { message, source } = await got.next();
    const via = parseVia(message.headers.get('Via')!)!;
    expect(via.received).toBe('127.0.0.1');
    expect(via.rport).toBeUndefined();
    await t.sendResponse(okFor(asRequest(message)), source);
    expect(asResponse(parsed(await phone.next())).status).toBe(200);
  });

  it('leaves the Via alone when the request came from the address it names without asking rport', async () => {
    const t = await transport({ protocols: ['udp'] });
    const got = inbox(t);
    const phone = await udpPeer();
    const via = `SIP/2.0/UDP 127.0.0.1:${phone.port};branch=z9hG4bKsame`;
    await phone.send(wire(messageLines(via)), t.local.port);
    expect((await got.next()).message.headers.get('Via')).toBe(via);
  });

  it('carries a Chinese UTF-8 body between two transports, request and response, byte for byte', async () => {
    const a = await transport({ protocols: ['udp'] });
    const b = await transport({ protocols: ['udp'] });
    const atA = inbox(a);
    const atB = inbox(b);
    const text = '您好，这里是智能客服。请问有什么可以帮您？';
    const request = asRequest(parsed(wire(messageLines('SIP/2.0/UDP placeholder;branch=z9hG4bKcn1'), text)));
    const used = await a.send(request, { protocol: 'udp', address: 'localhost', port: b.local.port });
    expect(used).toEqual({ protocol: 'udp', address: '127.0.0.1', port: b.local.port });

    const arrived = await atB.next();
    const received = asRequest(arrived.message);
    expect(received.body.toString('utf8')).toBe(text);
    expect(received.headers.get('Content-Length')).toBe(String(Buffer.byteLength(text)));
    // The sender stamped its own sent-by and asked for rport; the receiver filled it.
    expect(parseVia(received.headers.get('Via')!)).toMatchObject({
      transport: 'UDP',
      host: '127.0.0.1',
      port: a.local.port,
      branch: 'z9hG4bKcn1',
      rport: a.local.port,
    });

    await b.sendResponse(okFor(received, '收到'), arrived.source);
    const answer = asResponse((await atA.next()).message);
    expect(answer.status).toBe(200);
    expect(answer.body.toString('utf8')).toBe('收到');
  });

  it('answers a malformed but routable request with 400 naming the problem', async () => {
    const t = await transport({ protocols: ['udp'] });
    const got = inbox(t);
    const phone = await udpPeer();
    const lines = messageLines('SIP/2.0/UDP 10.0.0.9:5060;branch=z9hG4bKbad;rport').map((line) =>
      line.startsWith('CSeq') ? 'CSeq: 1 INVITE' : line,
    );
    await phone.send(wire(lines), t.local.port);
    const answer = asResponse(parsed(await phone.next()));
    expect(answer.status).toBe(400);
    expect(answer.reason).toContain('CSeq method does not match');
    expect(answer.headers.get('To')).toMatch(/;tag=/);
    expect(answer.headers.get('Call-ID')).toBe('c1@test');
    expect(got.seen).toHaveLength(0);
    expect(t.stats()).toMatchObject({ badRequests: 1, received: 0 });
  });

  it('drops garbage and unroutable messages without answering, and keeps serving', async () => {
    const t = await transport({ protocols: ['udp'] });
    const got = inbox(t);
    const phone = await udpPeer();
    await phone.send(Buffer.from([0xff, 0x00, 0x13, 0x37, 0x0d, 0x0a, 0x0d, 0x0a]), t.local.port);
    await phone.send('INVITE sip:x SIP/2.0\r\nVia: nonsense\r\n\r\n', t.local.port);
    await phone.send('\r\n\r\n', t.local.port);
    // A response whose Via we did not write (§18.1.2).
    await phone.send(
      wire(['SIP/2.0 200 OK', ...messageLines('SIP/2.0/UDP 10.9.9.9;branch=z9hG4bKx').slice(1)]),
      t.local.port,
    );
    await phone.send(
      wire(messageLines(`SIP/2.0/UDP 127.0.0.1:${phone.port};branch=z9hG4bKok`)),
      t.local.port,
    );
    const { message } = await got.next();
    expect(asRequest(message).method).toBe('MESSAGE');
    expect(t.stats()).toMatchObject({ dropped: 3, keepAlives: 1, received: 1, badRequests: 0 });
  });

  it('survives a handler that throws', async () => {
    const t = await transport({ protocols: ['udp'] });
    t.onMessage(() => {
      throw new Error('bug upstairs');
    });
    const phone = await udpPeer();
    await phone.send(wire(messageLines('SIP/2.0/UDP 127.0.0.1;branch=z9hG4bKthrow')), t.local.port);
    await waitFor(() => t.stats().handlerErrors === 1, 'the handler error to be counted');
    const got = inbox(t);
    await phone.send(wire(messageLines('SIP/2.0/UDP 127.0.0.1;branch=z9hG4bKafter')), t.local.port);
    expect(asRequest((await got.next()).message).method).toBe('MESSAGE');
  });

  it('rejects a send to a name that does not resolve, and counts it', async () => {
    const t = await transport({ protocols: ['udp'] });
    const request = asRequest(parsed(wire(messageLines('SIP/2.0/UDP x;branch=z9hG4bKdns'))));
    await expect(
      t.send(request, { protocol: 'udp', address: 'no-such-host.invalid', port: 5060 }),
    ).rejects.toMatchObject({
      code: 'dns',
    });
    expect(t.stats().sendErrors).toBe(1);
  });
});

/** A bare TCP peer reading SIP with the same framer a phone would need. */
async function tcpClient(port: number) {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((done) => socket.once('connect', () => done()));
  const messages: SipMessage[] = [];
  const framer = createStreamFramer(
    (message) => messages.push(message),
    () => {},
  );
  let closed = false;
  socket.on('data', (chunk) => framer.push(chunk));
  socket.on('close', () => {
    closed = true;
  });
  socket.on('error', () => {});
  const client = {
    socket,
    messages,
    get closed() {
      return closed;
    },
    close: () => socket.destroy(),
  };
  open.push(client);
  return client;
}

const pause = (ms: number) => new Promise((wake) => setTimeout(wake, ms));

describe('SIP transport over TCP', () => {
  it('frames a message split across segments, answers on the same connection, UTF-8 intact', async () => {
    const t = await transport();
    const got = inbox(t);
    const client = await tcpClient(t.local.port);
    const text = '预约明天上午十点';
    const bytes = wire(messageLines('SIP/2.0/TCP 10.1.1.1:5060;branch=z9hG4bKtcp1;rport'), text);
    // Cut inside a three-byte character, and give the segments time to arrive apart.
    const cut = bytes.length - 4;
    client.socket.write(bytes.subarray(0, 40));
    await pause(10);
    client.socket.write(bytes.subarray(40, cut));
    await pause(10);
    client.socket.write(bytes.subarray(cut));
    const { message, source } = await got.next();
    const request = asRequest(message);
    expect(request.body.toString('utf8')).toBe(text);
    expect(source).toMatchObject({ protocol: 'tcp', address: '127.0.0.1', port: client.socket.localPort });
    expect(source.connectionId).toBeGreaterThan(0);
    expect(parseVia(request.headers.get('Via')!)).toMatchObject({
      received: '127.0.0.1',
      rport: client.socket.localPort,
    });

    await t.sendResponse(okFor(request, '好的'), source);
    await waitFor(() => client.messages.length === 1, 'the response on the client connection');
    expect(asResponse(client.messages[0]!).body.toString('utf8')).toBe('好的');
    expect(t.stats().openConnections).toBe(1);
  });

  it('answers a keep-alive ping with a pong, and 400s a bad message without losing the stream', async () => {
    const t = await transport();
    const got = inbox(t);
    const client = await tcpClient(t.local.port);
    const pong = new Promise<Buffer>((done) => client.socket.once('data', done));
    client.socket.write('\r\n\r\n');
    expect((await pong).toString()).toBe('\r\n');
    const bad = messageLines('SIP/2.0/TCP 10.1.1.1;branch=z9hG4bKb').map((line) =>
      line.startsWith('Max-Forwards') ? 'Max-Forwards: lots' : line,
    );
    client.socket.write(
      Buffer.concat([wire(bad), wire(messageLines('SIP/2.0/TCP 10.1.1.1;branch=z9hG4bKg'))]),
    );
    await got.next();
    await waitFor(() => client.messages.length === 1, 'the 400');
    expect(asResponse(client.messages[0]!)).toMatchObject({
      status: 400,
      reason: expect.stringContaining('Max-Forwards'),
    });
    expect(client.closed).toBe(false);
  });

  it('closes a connection whose stream cannot be framed, and keeps accepting others', async () => {
    const t = await transport();
    const got = inbox(t);
    const rogue = await tcpClient(t.local.port);
    rogue.socket.write('OPTIONS sip:x SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\n\r\n');
    await waitFor(() => rogue.closed, 'the rogue connection to close');
    expect(t.stats().dropped).toBe(1);
    const good = await tcpClient(t.local.port);
    good.socket.write(wire(messageLines('SIP/2.0/TCP 10.1.1.1;branch=z9hG4bKfine')));
    expect(asRequest((await got.next()).message).method).toBe('MESSAGE');
  });

  it('sends requests over one connection per peer and reads the responses from it', async () => {
    const a = await transport();
    const b = await transport();
    const atA = inbox(a);
    const atB: SipMessage[] = [];
    b.onMessage((message, source) => {
      atB.push(message);
      void b.sendResponse(okFor(asRequest(message)), source);
    });
    const destination: SipEndpoint = { protocol: 'tcp', address: '127.0.0.1', port: b.local.port };
    const first = await a.send(
      asRequest(parsed(wire(messageLines('SIP/2.0/UDP x;branch=z9hG4bKt1', 'c1')))),
      destination,
    );
    const second = await a.send(
      asRequest(parsed(wire(messageLines('SIP/2.0/UDP x;branch=z9hG4bKt2', 'c2')))),
      destination,
    );
    expect(second.connectionId).toBe(first.connectionId);
    const answers = [await atA.next(), await atA.next()];
    expect(answers.map(({ message }) => message.headers.get('Call-ID'))).toEqual(['c1', 'c2']);
    expect(answers[0]!.source.connectionId).toBe(first.connectionId);
    expect(parseVia(atB[0]!.headers.get('Via')!)).toMatchObject({ transport: 'TCP', port: a.local.port });
    expect(b.stats().openConnections).toBe(1);
  });

  it('answers over a new connection to the Via when the request connection has closed', async () => {
    const t = await transport();
    const got = inbox(t);
    const phoneServer = net.createServer();
    const accepted: SipMessage[] = [];
    phoneServer.on('connection', (socket) => {
      const framer = createStreamFramer(
        (message) => accepted.push(message),
        () => {},
      );
      socket.on('data', (chunk) => framer.push(chunk));
    });
    await new Promise<void>((done) => phoneServer.listen(0, '127.0.0.1', done));
    open.push({ close: () => new Promise((done) => phoneServer.close(done)) });
    const phonePort = (phoneServer.address() as net.AddressInfo).port;

    const client = await tcpClient(t.local.port);
    client.socket.write(wire(messageLines(`SIP/2.0/TCP 127.0.0.1:${phonePort};branch=z9hG4bKgone`)));
    const { message, source } = await got.next();
    client.close();
    await waitFor(() => t.stats().openConnections === 0, 'the server to see the close');
    await t.sendResponse(okFor(asRequest(message)), source);
    await waitFor(() => accepted.length === 1, 'the response at the Via address');
    expect(asResponse(accepted[0]!).status).toBe(200);
  });

  it('closes idle connections after the configured time on the SIP clock', async () => {
    const clock = new VirtualClock({ startAt: 0 });
    const t = await transport({ tcpIdleMs: 60_000, timers: createSipTimers(clock) });
    const client = await tcpClient(t.local.port);
    await waitFor(() => t.stats().openConnections === 1, 'the connection');
    await clock.advance(30_000);
    client.socket.write(wire(messageLines('SIP/2.0/TCP 10.1.1.1;branch=z9hG4bKidle')));
    await waitFor(() => t.stats().received === 1, 'traffic');
    // Traffic at 30 s pushes the deadline to 90 s.
    await clock.advance(40_000);
    await pause(20);
    expect(client.closed).toBe(false);
    await clock.advance(20_000);
    await waitFor(() => client.closed, 'the idle connection to close');
    expect(t.stats().openConnections).toBe(0);
  });
});

describe('oversize requests (§18.1.1)', () => {
  const bigRequest = () =>
    asRequest(parsed(wire(messageLines('SIP/2.0/UDP x;branch=z9hG4bKbig'), '话'.repeat(600))));

  it('go over TCP when the peer listens on TCP', async () => {
    const a = await transport();
    const b = await transport();
    const atB = inbox(b);
    const used = await a.send(bigRequest(), { protocol: 'udp', address: '127.0.0.1', port: b.local.port });
    expect(used.protocol).toBe('tcp');
    const { message, source } = await atB.next();
    expect(source.protocol).toBe('tcp');
    expect(parseVia(message.headers.get('Via')!)?.transport).toBe('TCP');
    expect(a.stats().oversizeUdp).toBe(0);
  });

  it('fall back to UDP, counted, when the peer refuses TCP or TCP is off', async () => {
    const phone = await udpPeer();
    for (const protocols of [['udp', 'tcp'], ['udp']] as const) {
      const a = await transport({ protocols: [...protocols] });
      const used = await a.send(bigRequest(), { protocol: 'udp', address: '127.0.0.1', port: phone.port });
      expect(used.protocol).toBe('udp');
      const arrived = asRequest(parsed(await phone.next()));
      expect(arrived.body.length).toBe(1800);
      expect(parseVia(arrived.headers.get('Via')!)?.transport).toBe('UDP');
      expect(a.stats().oversizeUdp).toBe(1);
    }
  });
});
