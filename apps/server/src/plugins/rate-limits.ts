import fastifyRateLimit from '@fastify/rate-limit';
import { sql } from 'drizzle-orm';
import type { FastifyInstance } from 'fastify';
import type { Database, DatabaseHandle } from '../db/client';
import { rateLimitHits } from '../db/schema';
import { AppError } from '../lib/errors';

/**
 * Per-address limits of the endpoints anyone may call without signing in. Numbers are per client
 * IP (as the app sees it: behind a proxy only with TRUST_PROXY) and generous, because a call
 * centre puts a whole office behind one NAT address; they stop scripts, not people. The login has
 * its own lockout and delay (modules/auth/login-limit.ts) and each code target its own
 * once-a-minute throttle (modules/codes/codes.service.ts).
 */
export const PUBLIC_RATE_LIMITS = {
  /** Sending an SMS login code, a reset code, or a reset-link e-mail: each costs us a message. */
  sendCode: { max: 20, timeWindow: 10 * 60_000 },
  /** Checking a code or using a reset code or link (each code also counts its own wrong tries). */
  checkCode: { max: 60, timeWindow: 10 * 60_000 },
  /** Creating an account. */
  register: { max: 20, timeWindow: 60 * 60_000 },
  /** The OEM lookup and the console's config, fetched on every load of the console. */
  oemLookup: { max: 300, timeWindow: 60_000 },
} as const;

export type PublicRateLimit = keyof typeof PUBLIC_RATE_LIMITS;

export const rateLimitedMessage = (seconds: number) => `请求过于频繁，请 ${seconds} 秒后再试`;

/** A fixed window per key: the count so far and the milliseconds until it starts again. */
export interface RateLimitCounter {
  hit(key: string, windowMs: number): Promise<{ hits: number; ttlMs: number }>;
  sweep(): Promise<void>;
}

/** One process's counters: right for the embedded database, which serves one process only. */
export class MemoryRateLimitCounter implements RateLimitCounter {
  private readonly windows = new Map<string, { hits: number; resetAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async hit(key: string, windowMs: number) {
    const now = this.now();
    let window = this.windows.get(key);
    if (!window || window.resetAt <= now) {
      window = { hits: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.hits += 1;
    return { hits: window.hits, ttlMs: window.resetAt - now };
  }

  async sweep() {
    const now = this.now();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }
}

/**
 * Counters in table rate_limit_hits, shared by every API process on one PostgreSQL. One statement
 * counts a hit: concurrent requests from several processes serialise on the key's row, and an
 * ended window restarts in the same statement, so no two processes can both see a fresh window.
 * Times are the process's (synchronised hosts differ by milliseconds, nothing next to a window of
 * a minute), which is also what lets a test move the clock.
 */
export class DatabaseRateLimitCounter implements RateLimitCounter {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  async hit(key: string, windowMs: number) {
    const now = new Date(this.now()).toISOString();
    const result = await this.db.execute(sql`
      insert into ${rateLimitHits} as h (key, hits, reset_at)
      values (${key}, 1, ${now}::timestamptz + ${windowMs}::int * interval '1 millisecond')
      on conflict (key) do update set
        hits = case when h.reset_at <= ${now}::timestamptz then 1 else h.hits + 1 end,
        reset_at = case when h.reset_at <= ${now}::timestamptz then excluded.reset_at else h.reset_at end
      returning h.hits, extract(epoch from (h.reset_at - ${now}::timestamptz)) * 1000 as ttl_ms`);
    const row = (result as unknown as { rows: { hits: number | string; ttl_ms: number | string }[] })
      .rows[0]!;
    return { hits: Number(row.hits), ttlMs: Math.max(0, Number(row.ttl_ms)) };
  }

  async sweep() {
    await this.db
      .delete(rateLimitHits)
      .where(sql`${rateLimitHits.resetAt} <= ${new Date(this.now()).toISOString()}::timestamptz`);
  }
}

/**
 * The counter of a deployment: with PostgreSQL several API processes may serve it, so the counts
 * live in the database; the embedded database serves one process, whose memory is enough and cheaper.
 */
export const rateLimitCounterFor = (database: DatabaseHandle): RateLimitCounter =>
  database.kind === 'postgres' ? new DatabaseRateLimitCounter(database.db) : new MemoryRateLimitCounter();

/**
 * @fastify/rate-limit's store interface over a counter. The key it passes already holds the
 * route's groupId, and every route shares this one store (child answers itself), so routes of
 * one group count together; the local store would count each route apart.
 */
function storeFor(counter: RateLimitCounter) {
  return class CounterStore {
    incr(
      key: string,
      cb: (err: Error | null, res?: { current: number; ttl: number }) => void,
      timeWindow: number,
    ) {
      counter.hit(key, timeWindow).then(
        ({ hits, ttlMs }) => cb(null, { current: hits, ttl: ttlMs }),
        (err: Error) => cb(err),
      );
    }
    child() {
      return this;
    }
  };
}

/** The route option that puts a route under one of the public limits. */
export const publicRateLimit = (name: PublicRateLimit) => ({
  rateLimit: { ...PUBLIC_RATE_LIMITS[name], groupId: name },
});

const SWEEP_EVERY_MS = 10 * 60_000;

/**
 * Registers @fastify/rate-limit for the routes that ask for it (`config: publicRateLimit(...)`),
 * counting on `counter` (`rateLimitCounterFor`), which also sweeps ended windows here.
 */
export async function registerRateLimits(app: FastifyInstance, counter: RateLimitCounter) {
  await app.register(fastifyRateLimit, {
    global: false,
    // The route's groupId is appended: keys read "203.0.113.7:sendCode".
    keyGenerator: (req) => `${req.ip}:`,
    store: storeFor(counter) as never,
    // Only the older draft headers and Retry-After: the open API writes the IETF ones itself.
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (_req, ctx) =>
      new AppError(429, 'RATE_LIMITED', rateLimitedMessage(Math.max(1, Math.ceil(ctx.ttl / 1000)))),
  });
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', async () => {
    timer = setInterval(() => {
      counter.sweep().catch((err) => app.log.warn({ err }, 'rate-limit sweep failed'));
    }, SWEEP_EVERY_MS);
    timer.unref();
  });
  app.addHook('onClose', async () => clearInterval(timer));
}
