/**
 * One SIP stack per process: transport → transactions → user agent, wired together. The user
 * agent sees the layers below only through `SipTransactionPort`, built here.
 */
import { type Clock, systemClock } from '../../clock';
import { formatVia } from './message';
import { createSipTimers, type SipTimers } from './timers';
import { buildCancel, createTransactionLayer, newBranch, type TransactionLayer } from './transaction';
import { createSipTransport, type SipLogger, type SipProtocol, type SipTransport } from './transport';
import { type SipTransactionPort, SipUserAgent, type SipUserAgentOptions } from './user-agent';

export interface SipStackOptions {
  host: string;
  port: number;
  protocols?: SipProtocol[];
  /** The address carriers reach us at, when it is not the bound one (NAT). */
  advertisedHost?: string;
  advertisedPort?: number;
  clock?: Clock;
  logger?: SipLogger;
  /** RFC 3261 T1/T2/T4 (tests shorten them). */
  t1?: number;
  t2?: number;
  t4?: number;
  timerD?: number;
  /** 100 Trying delay for INVITEs (transaction.ts): default 200 ms, 0 behind Kamailio. */
  tryingDelayMs?: number;
  agent?: SipUserAgentOptions;
}

export interface SipStack {
  readonly transport: SipTransport;
  readonly transactions: TransactionLayer;
  readonly agent: SipUserAgent;
  readonly port: SipTransactionPort;
  stats(): { transactions: number } & ReturnType<SipUserAgent['stats']>;
  close(): Promise<void>;
}

/**
 * The user agent's view of a transaction layer and its transport. Exported so tests can run
 * user agents over the real transaction layer on an in-memory network and a virtual clock.
 */
export function createTransactionPort(layer: {
  transactions: TransactionLayer;
  timers: SipTimers;
  t1: number;
  t2: number;
  logger?: SipLogger;
}): SipTransactionPort {
  const { transactions, timers, t1, t2, logger } = layer;
  const transport = transactions.transport;
  return {
    timers,
    contactHost: transport.advertised.host,
    contactPort: transport.advertised.port,
    t1,
    t2,
    request(request, destination, handlers) {
      const transaction = transactions.request(request, destination, {
        onProvisional: handlers.onResponse,
        onFinal: handlers.onResponse,
        onError: (failure) => handlers.onFailure(failure.status === 408 ? 'timeout' : 'transport'),
      });
      return {
        request: transaction.request,
        cancel(headers) {
          const cancel = buildCancel(transaction.request);
          for (const [name, value] of headers ?? []) cancel.headers.append(name, value);
          cancel.headers.set('Content-Length', '0');
          transaction.cancel(undefined, cancel);
        },
      };
    },
    sendAck(ack, destination) {
      // An ACK for a 2xx is a transaction of its own (§17.1.1.3): a fresh branch; the transport
      // stamps the sent-by.
      ack.headers.prepend(
        'Via',
        formatVia({
          protocol: 'SIP/2.0',
          transport: destination.protocol.toUpperCase(),
          host: transport.advertised.host,
          port: transport.advertised.port,
          params: new Map([
            ['branch', newBranch()],
            ['rport', null],
          ]),
        }),
      );
      transport.send(ack, destination).catch((err: unknown) => logger?.warn({ err }, 'ACK not sent'));
    },
    onRequest(handler) {
      transactions.onRequest((request, transaction) => handler(request, transaction, transaction.source));
      transactions.onAck((ack, source) => handler(ack, null, source));
    },
    findInviteTransaction: (cancel) => transactions.findInviteServerTransaction(cancel),
    onStrayResponse: (handler) => transactions.onStrayResponse(handler),
  };
}

export async function createSipStack(options: SipStackOptions): Promise<SipStack> {
  const timers = createSipTimers(options.clock ?? systemClock);
  const transport = await createSipTransport({
    host: options.host,
    port: options.port,
    protocols: options.protocols,
    advertisedHost: options.advertisedHost,
    advertisedPort: options.advertisedPort,
    timers,
    logger: options.logger,
  });
  const t1 = options.t1 ?? 500;
  const t2 = options.t2 ?? 4000;
  const transactions = createTransactionLayer({
    transport,
    timers,
    t1,
    t2,
    t4: options.t4,
    timerD: options.timerD,
    tryingDelayMs: options.tryingDelayMs,
    logger: options.logger,
  });

  const port = createTransactionPort({ transactions, timers, t1, t2, logger: options.logger });
  const agent = new SipUserAgent(port, options.agent);

  return {
    transport,
    transactions,
    agent,
    port,
    stats: () => ({ transactions: transactions.size(), ...agent.stats() }),
    async close() {
      transactions.close();
      await transport.close();
    },
  };
}
