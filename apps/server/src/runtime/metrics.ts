import type { AssistantConfig, CallTurn } from '@callpilot/contracts';
import { count, eq, min } from 'drizzle-orm';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from '../db/client';
import { webhookDeliveries } from '../db/schema';
import type { Clock } from '../engine/clock';
import type { DialerStore } from '../engine/dialer/ports';
import type { RegistrationState } from '../engine/telephony/sip/registration';

export type CallDirection = 'inbound' | 'outbound';

/** What the scrape reads live from the runtime instead of counting up and down (which drifts). */
export interface MetricSources {
  db: Database;
  clock: Clock;
  callsInFlight: () => Record<CallDirection, number>;
  /** Trunk registrations by state; null when this process runs no SIP lines. */
  sipRegistrations: () => Record<string, number> | null;
}

/** The states a trunk registration reports (engine/telephony/sip/registration.ts), always exported. */
const REGISTRATION_STATES: readonly RegistrationState[] = [
  'unregistered',
  'registering',
  'registered',
  'failed',
];

/** Seconds: provider answers range from tens of milliseconds (cache) to several seconds (a slow LLM). */
const PROVIDER_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16];
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** `404` → `4xx`; a status outside 100-599 (or none) is `none`. */
export const statusClass = (status: number | null | undefined) =>
  status && status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'none';

/**
 * The Prometheus metrics of one process. Each app instance gets its own registry: tests build
 * many apps in one process, and the global default registry would make their metrics collide.
 */
export function createMetrics(sources: MetricSources) {
  const registry = new Registry();
  let defaultsStarted = false;

  new Gauge({
    name: 'callpilot_calls_in_flight',
    help: 'Calls this process is running now, by direction.',
    labelNames: ['direction'],
    registers: [registry],
    collect() {
      const live = sources.callsInFlight();
      this.set({ direction: 'inbound' }, live.inbound);
      this.set({ direction: 'outbound' }, live.outbound);
    },
  });

  const dialerClaims = new Counter({
    name: 'callpilot_dialer_claims_total',
    help: 'Claims of due task contacts by the dialer, by outcome (claimed: one or more contacts, empty: none due or capped, failed: the query failed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const claimedContacts = new Counter({
    name: 'callpilot_dialer_claimed_contacts_total',
    help: 'Task contacts the dialer claimed (each becomes one call attempt).',
    registers: [registry],
  });
  const leaseRenewals = new Counter({
    name: 'callpilot_dialer_lease_renewals_total',
    help: 'Heartbeats extending the leases of the contacts this dialer is calling, by outcome (ok, failed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const outcome of ['claimed', 'empty', 'failed']) dialerClaims.inc({ outcome }, 0);
  for (const outcome of ['ok', 'failed']) leaseRenewals.inc({ outcome }, 0);

  // Both outbox gauges come from one query per scrape: the first collect starts it, the other joins.
  let outboxQuery: Promise<{ pending: number; oldestSeconds: number }> | null = null;
  const outbox = () => {
    outboxQuery ??= sources.db
      .select({ pending: count(), oldest: min(webhookDeliveries.createdAt) })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.status, 'pending'))
      .then(([row]) => ({
        pending: Number(row?.pending ?? 0),
        oldestSeconds: row?.oldest ? Math.max(0, (sources.clock.now() - row.oldest.getTime()) / 1000) : 0,
      }))
      .finally(() => {
        outboxQuery = null;
      });
    return outboxQuery;
  };
  new Gauge({
    name: 'callpilot_webhook_outbox_pending',
    help: 'Webhook deliveries waiting to be sent or retried (all processes: read from the database).',
    registers: [registry],
    async collect() {
      this.set((await outbox()).pending);
    },
  });
  new Gauge({
    name: 'callpilot_webhook_outbox_oldest_pending_seconds',
    help: 'Age of the oldest webhook delivery still pending; 0 when none is.',
    registers: [registry],
    async collect() {
      this.set((await outbox()).oldestSeconds);
    },
  });

  new Gauge({
    name: 'callpilot_sip_registrations',
    help: 'SIP trunk registrations of this process, by state (unregistered, registering, registered, failed); 0 without SIP lines.',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const states = sources.sipRegistrations() ?? {};
      for (const state of new Set([...REGISTRATION_STATES, ...Object.keys(states)])) {
        this.set({ state }, states[state] ?? 0);
      }
    },
  });
  const sipInvites = new Counter({
    name: 'callpilot_sip_invites_total',
    help: 'Final responses to SIP INVITEs, by direction (inbound: we answered; outbound: the far end did) and status class; none: no final response (timeout, transport failure).',
    labelNames: ['direction', 'status_class'],
    registers: [registry],
  });

  const providerLatency = new Histogram({
    name: 'callpilot_provider_latency_seconds',
    help: 'Time the speech and language providers took per assistant turn, by kind (asr, tts, llm) and provider.',
    labelNames: ['kind', 'provider'],
    buckets: PROVIDER_BUCKETS,
    registers: [registry],
  });

  const httpDuration = new Histogram({
    name: 'callpilot_http_request_duration_seconds',
    help: 'HTTP request durations by method, route pattern and status class.',
    labelNames: ['method', 'route', 'status_class'],
    buckets: HTTP_BUCKETS,
    registers: [registry],
  });

  return {
    registry,
    /** The exposition text; process metrics start on the first scrape (see below). */
    async scrape(): Promise<{ contentType: string; body: string }> {
      if (!defaultsStarted) {
        // Lazily: every event-loop monitor started runs for the life of the process, and tests
        // build many apps that are never scraped.
        defaultsStarted = true;
        collectDefaultMetrics({ register: registry });
      }
      return { contentType: registry.contentType, body: await registry.metrics() };
    },

    /** The dialer's store, counting its claims and lease renewals as they happen. */
    instrumentDialerStore(store: DialerStore): DialerStore {
      const instrumented = Object.create(store) as DialerStore;
      instrumented.claimDueContacts = async (request) => {
        try {
          const claim = await store.claimDueContacts(request);
          dialerClaims.inc({ outcome: claim.contacts.length > 0 ? 'claimed' : 'empty' });
          claimedContacts.inc(claim.contacts.length);
          return claim;
        } catch (err) {
          dialerClaims.inc({ outcome: 'failed' });
          throw err;
        }
      };
      instrumented.renewLeases = async (owner, contactIds, until) => {
        try {
          await store.renewLeases(owner, contactIds, until);
          leaseRenewals.inc({ outcome: 'ok' });
        } catch (err) {
          leaseRenewals.inc({ outcome: 'failed' });
          throw err;
        }
      };
      return instrumented;
    },

    sipInvite(direction: CallDirection, status: number | null) {
      sipInvites.inc({ direction, status_class: statusClass(status) });
    },

    /**
     * One turn's provider times, as the session measured them for the latency waterfall. The
     * provider label stays a small set (a vendor or a mode), never a profile id or a model name.
     */
    turn(turn: CallTurn, config: AssistantConfig) {
      const latency = turn.latency;
      if (!latency) return;
      // Only real lines measure endpointing from the audio (contracts: turnLatency).
      const onLine = latency.endpointMs !== undefined;
      const observe = (kind: 'asr' | 'tts' | 'llm', provider: string, ms: number | undefined) => {
        if (ms !== undefined && Number.isFinite(ms) && ms >= 0)
          providerLatency.observe({ kind, provider }, ms / 1000);
      };
      // The simulated carrier passes text: its "recognition" is simulated, not a provider's.
      observe(
        'asr',
        onLine ? (config.hearing.providerId ? 'profile' : 'default') : 'simulated',
        latency.recognitionMs,
      );
      observe('llm', config.brain.providerId ? 'openai_compatible' : 'script', latency.brainMs);
      if (latency.synthesisMs > 0) observe('tts', config.voice.provider, latency.synthesisMs);
    },

    http(method: string, route: string, status: number, seconds: number) {
      httpDuration.observe({ method, route, status_class: statusClass(status) }, seconds);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
