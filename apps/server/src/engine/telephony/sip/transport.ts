/**
 * SIP transport layer (RFC 3261 §18, RFC 3581 rport): UDP and TCP on one host and port.
 *
 *   const transport = await createSipTransport({ host: '0.0.0.0', port: 5060, advertisedHost: '203.0.113.7' });
 *   transport.onMessage((message, source) => ...);       // one handler: the transaction layer
 *   await transport.send(request, { protocol: 'udp', address: 'trunk.example.cn', port: 5060 });
 *   await transport.sendResponse(response, source);      // source: where the request came from
 *   transport.advertised                                 // { host, port } for Contact and SDP
 *   transport.stats(); await transport.close();
 *
 * Receiving: a datagram is one message; a TCP stream is framed by Content-Length. Requests get
 * `received` (and `rport` when asked for) on their top Via, so responses find the way back
 * through NAT. A malformed request whose Via, From, To, Call-ID and CSeq are readable is answered
 * 400 with the problem in the reason phrase; anything else malformed is dropped and counted.
 * Responses whose top Via was not written by this transport are dropped (§18.1.2). Nothing here
 * throws at the network: a bad peer costs one dropped message or one closed connection.
 *
 * Sending a request stamps its top Via in place (transport, advertised sent-by, `rport`), so the
 * stored request, its retransmissions and the ACK or CANCEL built from it carry the same Via.
 * `send` resolves with the endpoint actually used (resolved address, protocol, connection):
 * retransmissions go there without a second DNS lookup. It rejects with a `SipTransportError`,
 * which the transaction layer reports to its user as a 503 (§8.1.3.1).
 *
 * Oversize requests (§18.1.1): a request over 1300 bytes meant for UDP goes over TCP when TCP is
 * enabled, and back over UDP if the peer refuses the connection (most trunks listen on UDP only,
 * and IP fragmentation usually gets through). With TCP disabled it goes over UDP, logged and
 * counted in `stats().oversizeUdp`, never silently.
 *
 * Not done: TLS, WebSocket, SRV/NAPTR lookups (RFC 3263), `maddr` (multicast) in Via.
 * IPv6 works when the transport is bound to an IPv6 address (`::` is dual-stack).
 */
import dgram from 'node:dgram';
import dns from 'node:dns';
import net from 'node:net';
import os from 'node:os';
import {
  createStreamFramer,
  formatVia,
  isRequest,
  type ParseFailure,
  parse,
  parseVia,
  SipHeaders,
  type SipMessage,
  type SipRequest,
  type SipResponse,
  type StreamFramer,
  serialize,
} from './message';
import { createSipTimers, type SipTimers } from './timers';

export type SipProtocol = 'udp' | 'tcp';

export interface SipEndpoint {
  protocol: SipProtocol;
  /** An IP address (IPv4-mapped IPv6 reported as plain IPv4). On send, a hostname is resolved. */
  address: string;
  port: number;
  /** The TCP connection a message arrived on; on send, used first while it is still open. */
  connectionId?: number;
}

/** pino-compatible: a pino logger or child can be passed as is. */
export interface SipLogger {
  warn(obj: object, msg: string): void;
  debug?(obj: object, msg: string): void;
}

export interface SipTransportOptions {
  /** Address to bind: an interface address, `0.0.0.0` or `::` (dual-stack). */
  host: string;
  /** 0 picks a free port, the same for UDP and TCP. */
  port: number;
  protocols?: SipProtocol[];
  /** The address peers must reach us at (NAT): Via sent-by, and Contact and SDP upstairs. */
  advertisedHost?: string;
  advertisedPort?: number;
  timers?: SipTimers;
  logger?: SipLogger;
  /** A TCP connection with no traffic for this long is closed. Default 300 s. */
  tcpIdleMs?: number;
  /** Outgoing TCP connections not established by then fail. Default 10 s. */
  tcpConnectTimeoutMs?: number;
  /** Inbound TCP connections beyond this are refused. Default 4096. */
  maxConnections?: number;
  /** Largest message accepted on a stream. Default 64 KiB. */
  maxMessageBytes?: number;
}

export interface SipTransportStats {
  received: number;
  sent: number;
  /** Malformed messages not answered, responses not ours, messages to a closed transport. */
  dropped: number;
  /** Malformed requests answered 400. */
  badRequests: number;
  sendErrors: number;
  /** A message handler threw: a bug upstairs, counted so it is visible. */
  handlerErrors: number;
  /** Requests over 1300 bytes that had to go over UDP. */
  oversizeUdp: number;
  keepAlives: number;
  openConnections: number;
}

export type MessageHandler = (message: SipMessage, source: SipEndpoint) => void;

export interface SipTransport {
  readonly local: { host: string; port: number };
  readonly advertised: { host: string; port: number };
  readonly protocols: readonly SipProtocol[];
  /** Sets the one handler of received messages; returns a function removing it. */
  onMessage(handler: MessageHandler): () => void;
  /** Sends a request (its top Via is stamped) or a stateless response to a destination. */
  send(message: SipMessage, destination: SipEndpoint): Promise<SipEndpoint>;
  /** Sends a response back along its top Via (§18.2.2, RFC 3581), on the request's connection if open. */
  sendResponse(response: SipResponse, source?: SipEndpoint): Promise<SipEndpoint>;
  stats(): SipTransportStats;
  close(): Promise<void>;
}

export class SipTransportError extends Error {
  constructor(
    readonly code: 'dns' | 'connect' | 'send' | 'closed' | 'invalid',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'SipTransportError';
  }
}

/** Requests above this go over TCP when they can (§18.1.1: 1300 bytes with an unknown path MTU). */
export const UDP_REQUEST_LIMIT = 1300;
const UDP_MAX_PAYLOAD = 65_507;
const DEFAULT_SIP_PORT = 5060;
// A peer that does not read what we write would otherwise grow our memory without bound.
const MAX_WRITE_BACKLOG = 1024 * 1024;

const stripBrackets = (host: string) => (host.startsWith('[') ? host.slice(1, -1) : host);
const normalizeAddress = (address: string) =>
  address.startsWith('::ffff:') && net.isIPv4(address.slice(7)) ? address.slice(7) : address;
const hostForVia = (host: string) => (net.isIPv6(host) ? `[${host}]` : host);
const peerKey = (address: string, port: number) => `${normalizeAddress(address).toLowerCase()}|${port}`;
const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

interface Connection {
  id: number;
  socket: net.Socket;
  key: string;
  ready: Promise<void>;
  lastActivity: number;
  cancelIdle: () => void;
  closed: boolean;
}

/** An address of this machine to advertise when bound to a wildcard: the first external IPv4. */
function defaultAdvertisedHost(bound: string): string {
  if (bound !== '0.0.0.0' && bound !== '::') return bound;
  const addresses = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
  const external = addresses.find((entry) => entry.family === 'IPv4' && !entry.internal);
  return external?.address ?? '127.0.0.1';
}

/** A 400 for a request that failed to parse but can be routed back (§8.2.6, §21.4.1). */
function badRequestFor(request: SipRequest, problem: string): SipResponse {
  const headers = new SipHeaders();
  for (const via of request.headers.getAll('Via')) headers.append('Via', via);
  headers.append('From', request.headers.get('From')!);
  const to = request.headers.get('To')!;
  headers.append('To', /;\s*tag=/i.test(to) ? to : `${to};tag=${Math.random().toString(36).slice(2, 10)}`);
  headers.append('Call-ID', request.headers.get('Call-ID')!);
  headers.append('CSeq', request.headers.get('CSeq')!);
  // The reason phrase is the one place a peer's engineer sees why; keep it on one printable line.
  const reason = `Bad Request (${problem})`.replace(/\p{Cc}+/gu, ' ').slice(0, 160);
  return { version: 'SIP/2.0', status: 400, reason, headers, body: Buffer.alloc(0) };
}

export async function createSipTransport(options: SipTransportOptions): Promise<SipTransport> {
  const protocols = [...new Set<SipProtocol>(options.protocols ?? ['udp', 'tcp'])];
  if (protocols.length === 0) throw new Error('SIP transport needs at least one protocol');
  const timers = options.timers ?? createSipTimers();
  const logger = options.logger;
  const tcpIdleMs = options.tcpIdleMs ?? 300_000;
  const connectTimeoutMs = options.tcpConnectTimeoutMs ?? 10_000;
  const maxConnections = options.maxConnections ?? 4096;
  const ipv6 = net.isIPv6(options.host);

  const stats: SipTransportStats = {
    received: 0,
    sent: 0,
    dropped: 0,
    badRequests: 0,
    sendErrors: 0,
    handlerErrors: 0,
    oversizeUdp: 0,
    keepAlives: 0,
    openConnections: 0,
  };
  let handler: MessageHandler | undefined;
  let closed = false;
  let nextConnectionId = 1;
  const connections = new Map<number, Connection>();
  const byPeer = new Map<string, Connection>();

  const { udp, server, port } = await bind(options.host, options.port, protocols);
  const local = { host: options.host, port };
  const advertised = {
    host: stripBrackets(options.advertisedHost ?? defaultAdvertisedHost(options.host)),
    port: options.advertisedPort ?? port,
  };

  const drop = (why: string, source: SipEndpoint | undefined, detail?: string) => {
    stats.dropped++;
    logger?.debug?.(
      { why, detail, from: source && `${source.address}:${source.port}` },
      'SIP message dropped',
    );
  };

  // ---- Receiving -------------------------------------------------------------------------------

  /** §18.2.1 and RFC 3581 §4: record where the request really came from on its top Via. */
  const stampReceived = (request: SipRequest, source: SipEndpoint) => {
    const via = parseVia(request.headers.get('Via') ?? '');
    if (!via) return;
    const asked = via.rport === true;
    if (!asked && stripBrackets(via.host).toLowerCase() === source.address.toLowerCase()) return;
    via.received = source.address;
    if (asked) via.rport = source.port;
    request.headers.setFirst('Via', formatVia(via));
  };

  /** §18.1.2: a response whose top Via sent-by is not what we insert is not ours. */
  const isOurs = (response: SipResponse) => {
    const via = parseVia(response.headers.get('Via') ?? '');
    if (!via) return false;
    const host = stripBrackets(via.host).toLowerCase();
    const viaPort = via.port ?? DEFAULT_SIP_PORT;
    return (
      (host === advertised.host.toLowerCase() && viaPort === advertised.port) ||
      (host === local.host.toLowerCase() && viaPort === local.port)
    );
  };

  const deliver = (message: SipMessage, source: SipEndpoint) => {
    if (closed) return drop('closed', source);
    if (isRequest(message)) stampReceived(message, source);
    else if (!isOurs(message)) return drop('response not sent by us', source);
    stats.received++;
    if (!handler) return drop('no handler', source);
    try {
      handler(message, source);
    } catch (error) {
      stats.handlerErrors++;
      logger?.warn({ err: error, from: `${source.address}:${source.port}` }, 'SIP message handler threw');
    }
  };

  const reject = (failure: ParseFailure, source: SipEndpoint) => {
    const partial = failure.partial;
    if (!failure.respondable || !partial || !isRequest(partial) || partial.method === 'ACK') {
      return drop('malformed', source, failure.reason);
    }
    stampReceived(partial, source);
    stats.badRequests++;
    logger?.debug?.({ reason: failure.reason, from: `${source.address}:${source.port}` }, 'SIP 400 sent');
    sendResponse(badRequestFor(partial, failure.reason), source).catch(() => {});
  };

  udp?.on('message', (datagram, rinfo) => {
    const source: SipEndpoint = {
      protocol: 'udp',
      address: normalizeAddress(rinfo.address),
      port: rinfo.port,
    };
    const result = parse(datagram);
    if (result.ok) return deliver(result.message, source);
    // CRLF keep-alives (RFC 5626 §4.4.1 uses STUN on UDP, but many phones send bare CRLFs).
    if (result.reason === 'empty message') {
      stats.keepAlives++;
      return;
    }
    reject(result, source);
  });
  udp?.on('error', (error) => logger?.warn({ err: error }, 'SIP UDP socket error'));

  // ---- TCP connections -------------------------------------------------------------------------

  const touch = (connection: Connection) => {
    connection.lastActivity = timers.now();
  };

  const scheduleIdleCheck = (connection: Connection, delay: number) => {
    connection.cancelIdle = timers.set(delay, () => {
      if (connection.closed) return;
      const idle = timers.now() - connection.lastActivity;
      if (idle >= tcpIdleMs) connection.socket.destroy();
      else scheduleIdleCheck(connection, tcpIdleMs - idle);
    });
  };

  const adopt = (socket: net.Socket, ready: Promise<void>, remote: { address: string; port: number }) => {
    const connection: Connection = {
      id: nextConnectionId++,
      socket,
      key: peerKey(remote.address, remote.port),
      ready,
      lastActivity: timers.now(),
      cancelIdle: () => {},
      closed: false,
    };
    connections.set(connection.id, connection);
    byPeer.set(connection.key, connection);
    stats.openConnections = connections.size;
    scheduleIdleCheck(connection, tcpIdleMs);
    socket.setNoDelay(true);

    const source = (): SipEndpoint => ({
      protocol: 'tcp',
      address: normalizeAddress(socket.remoteAddress ?? remote.address),
      port: socket.remotePort ?? remote.port,
      connectionId: connection.id,
    });
    const framer: StreamFramer = createStreamFramer(
      (message) => deliver(message, source()),
      (failure) => reject(failure, source()),
      {
        maxMessageBytes: options.maxMessageBytes,
        onKeepAlive: () => {
          stats.keepAlives++;
          // RFC 5626 §3.5.1: a double-CRLF ping is answered with a single CRLF pong.
          if (socket.writable) socket.write('\r\n');
        },
      },
    );
    socket.on('data', (chunk) => {
      touch(connection);
      framer.push(chunk);
      // After a framing error the next message's start is unknown: the stream is useless.
      if (framer.broken) socket.destroy();
    });
    socket.on('error', (error) =>
      logger?.debug?.({ err: error, connection: connection.id }, 'SIP TCP error'),
    );
    socket.on('close', () => {
      connection.closed = true;
      connection.cancelIdle();
      connections.delete(connection.id);
      if (byPeer.get(connection.key) === connection) byPeer.delete(connection.key);
      stats.openConnections = connections.size;
    });
    return connection;
  };

  server?.on('connection', (socket) => {
    if (closed || connections.size >= maxConnections) {
      stats.dropped++;
      socket.destroy();
      return;
    }
    adopt(socket, Promise.resolve(), {
      address: socket.remoteAddress ?? '',
      port: socket.remotePort ?? 0,
    });
  });
  server?.on('error', (error) => logger?.warn({ err: error }, 'SIP TCP server error'));

  const connect = (address: string, remotePort: number): Connection => {
    const socket = net.connect({ host: address, port: remotePort });
    const ready = new Promise<void>((resolve, reject) => {
      const cancelTimeout = timers.set(connectTimeoutMs, () =>
        socket.destroy(new Error(`no connection within ${connectTimeoutMs} ms`)),
      );
      socket.once('connect', () => {
        cancelTimeout();
        resolve();
      });
      socket.once('close', () => {
        cancelTimeout();
        reject(new SipTransportError('connect', `TCP connection to ${address}:${remotePort} closed`));
      });
      socket.once('error', (error) => {
        cancelTimeout();
        reject(
          new SipTransportError('connect', `TCP to ${address}:${remotePort}: ${error.message}`, {
            cause: error,
          }),
        );
      });
    });
    // Rejections are observed by whoever writes; this only keeps an unused failure quiet.
    ready.catch(() => {});
    return adopt(socket, ready, { address, port: remotePort });
  };

  const writeTcp = async (connection: Connection, bytes: Buffer) => {
    await connection.ready;
    if (connection.closed || !connection.socket.writable) {
      throw new SipTransportError('send', 'TCP connection closed');
    }
    if (connection.socket.writableLength > MAX_WRITE_BACKLOG) {
      connection.socket.destroy();
      throw new SipTransportError('send', 'TCP peer is not reading');
    }
    touch(connection);
    await new Promise<void>((resolve, reject) =>
      connection.socket.write(bytes, (error) =>
        error ? reject(new SipTransportError('send', error.message, { cause: error })) : resolve(),
      ),
    );
  };

  // ---- Sending ---------------------------------------------------------------------------------

  const resolve = async (host: string): Promise<string> => {
    const literal = stripBrackets(host);
    if (net.isIP(literal)) return literal;
    try {
      const found = await dns.promises.lookup(literal, { family: ipv6 ? 0 : 4 });
      return found.address;
    } catch (error) {
      throw new SipTransportError('dns', `cannot resolve ${literal}: ${errorText(error)}`, { cause: error });
    }
  };

  const sendUdp = async (bytes: Buffer, address: string, remotePort: number) => {
    if (!udp) throw new SipTransportError('invalid', 'UDP is not enabled on this transport');
    if (bytes.length > UDP_MAX_PAYLOAD) throw new SipTransportError('send', 'message too large for UDP');
    const target = ipv6 && net.isIPv4(address) ? `::ffff:${address}` : address;
    await new Promise<void>((resolve, reject) =>
      udp.send(bytes, remotePort, target, (error) =>
        error ? reject(new SipTransportError('send', error.message, { cause: error })) : resolve(),
      ),
    );
  };

  /** Writes to the destination's connection, an open one to the same peer, or a new one. */
  const sendTcp = async (bytes: Buffer, destination: SipEndpoint, address: string): Promise<SipEndpoint> => {
    if (!server) throw new SipTransportError('invalid', 'TCP is not enabled on this transport');
    const given =
      destination.connectionId === undefined ? undefined : connections.get(destination.connectionId);
    const connection =
      (given && !given.closed ? given : undefined) ??
      byPeer.get(peerKey(address, destination.port)) ??
      connect(address, destination.port);
    await writeTcp(connection, bytes);
    return { protocol: 'tcp', address, port: destination.port, connectionId: connection.id };
  };

  const stampVia = (request: SipRequest, protocol: SipProtocol) => {
    const via = parseVia(request.headers.get('Via') ?? '');
    if (!via) throw new SipTransportError('invalid', `${request.method} without a valid Via`);
    via.transport = protocol.toUpperCase();
    via.host = hostForVia(advertised.host);
    via.port = advertised.port;
    if (via.rport === undefined) via.rport = true;
    via.received = undefined;
    via.params.delete('received');
    request.headers.setFirst('Via', formatVia(via));
  };

  const sendRequest = async (request: SipRequest, destination: SipEndpoint): Promise<SipEndpoint> => {
    const address = await resolve(destination.address);
    stampVia(request, destination.protocol);
    let bytes = serialize(request);
    if (destination.protocol === 'tcp') return sendTcp(bytes, destination, address);
    if (bytes.length > UDP_REQUEST_LIMIT) {
      if (server) {
        stampVia(request, 'tcp');
        try {
          return await sendTcp(serialize(request), { ...destination, protocol: 'tcp' }, address);
        } catch (error) {
          if (!(error instanceof SipTransportError) || error.code !== 'connect') throw error;
          logger?.debug?.({ to: `${address}:${destination.port}` }, 'TCP refused: oversize request over UDP');
        }
        stampVia(request, 'udp');
        bytes = serialize(request);
      }
      stats.oversizeUdp++;
      logger?.warn(
        { bytes: bytes.length, method: request.method, to: `${address}:${destination.port}` },
        'SIP request over 1300 bytes sent over UDP',
      );
    }
    await sendUdp(bytes, address, destination.port);
    return { protocol: 'udp', address, port: destination.port };
  };

  const counted = async (work: () => Promise<SipEndpoint>): Promise<SipEndpoint> => {
    if (closed) throw new SipTransportError('closed', 'SIP transport is closed');
    try {
      const used = await work();
      stats.sent++;
      return used;
    } catch (error) {
      stats.sendErrors++;
      throw error instanceof SipTransportError ? error : new SipTransportError('send', errorText(error));
    }
  };

  function sendResponse(response: SipResponse, source?: SipEndpoint): Promise<SipEndpoint> {
    return counted(async () => {
      const via = parseVia(response.headers.get('Via') ?? '');
      if (!via) throw new SipTransportError('invalid', 'response without a valid Via');
      const protocol = via.transport.toLowerCase();
      const bytes = serialize(response);
      if (protocol === 'tcp') {
        // §18.2.2: the request's connection first; if it closed, a new one to received/sent-by.
        const open = source?.connectionId === undefined ? undefined : connections.get(source.connectionId);
        if (source && open && !open.closed) {
          await writeTcp(open, bytes);
          return { ...source, connectionId: open.id };
        }
        const address = await resolve(via.received ?? via.host);
        const port = via.port ?? DEFAULT_SIP_PORT;
        return sendTcp(bytes, { protocol: 'tcp', address, port }, address);
      }
      if (protocol !== 'udp')
        throw new SipTransportError('invalid', `unsupported transport ${via.transport}`);
      // RFC 3581 §4: received and rport together name the NAT binding the request came through.
      const address = await resolve(via.received ?? via.host);
      const port = typeof via.rport === 'number' && via.received ? via.rport : (via.port ?? DEFAULT_SIP_PORT);
      await sendUdp(bytes, address, port);
      return { protocol: 'udp', address, port };
    });
  }

  return {
    local,
    advertised,
    protocols,
    onMessage(next) {
      handler = next;
      return () => {
        if (handler === next) handler = undefined;
      };
    },
    send(message, destination) {
      return counted(async () => {
        if (isRequest(message)) return sendRequest(message, destination);
        const address = await resolve(destination.address);
        const bytes = serialize(message);
        if (destination.protocol === 'tcp') return sendTcp(bytes, destination, address);
        await sendUdp(bytes, address, destination.port);
        return { protocol: 'udp', address, port: destination.port };
      });
    },
    sendResponse,
    stats: () => ({ ...stats }),
    async close() {
      if (closed) return;
      closed = true;
      handler = undefined;
      for (const connection of connections.values()) connection.socket.destroy();
      await Promise.all([
        udp && new Promise<void>((done) => udp.close(() => done())),
        server && new Promise<void>((done) => server.close(() => done())),
      ]);
    },
  };
}

// ---- Binding -------------------------------------------------------------------------------------

function bindUdp(host: string, port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
    socket.once('error', reject);
    socket.bind(port, host, () => {
      socket.off('error', reject);
      resolve(socket);
    });
  });
}

function listenTcp(host: string, port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

/** Binds UDP and TCP to the same port; with port 0, retries when TCP finds UDP's port taken. */
async function bind(
  host: string,
  port: number,
  protocols: SipProtocol[],
): Promise<{ udp?: dgram.Socket; server?: net.Server; port: number }> {
  for (let attempt = 0; ; attempt++) {
    const udp = protocols.includes('udp') ? await bindUdp(host, port) : undefined;
    const chosen = udp ? udp.address().port : port;
    if (!protocols.includes('tcp')) return { udp, port: chosen };
    try {
      const server = await listenTcp(host, chosen);
      return { udp, server, port: (server.address() as net.AddressInfo).port };
    } catch (error) {
      udp?.close();
      const inUse = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (!inUse || port !== 0 || attempt >= 10) throw error;
    }
  }
}
