import type { FastifyReply } from 'fastify';
import { AppError } from '../../../lib/errors';

/** The window every key's `rateLimitPerMinute` is counted over. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window ends and the count starts again. */
  resetSeconds: number;
}

export const rateLimitMessage = (limit: number, seconds: number) =>
  `请求过于频繁：该 API 密钥每分钟最多 ${limit} 次请求，请在 ${seconds} 秒后重试`;

/**
 * Counts each key's requests in a fixed window that opens with its first request (as
 * @fastify/rate-limit's local store does). It is our own rather than that plugin because the
 * plugin writes only the older `RateLimit-*` draft headers, keeps one counter per route rather
 * than per key, and would run outside the key check, so 401/403 answers could not carry the key's
 * numbers. The counters live in this process: with N API processes behind a balancer a key gets
 * up to N times its limit (documented in the open API's description).
 */
export class KeyRateLimiter {
  private readonly windows = new Map<string, { start: number; count: number }>();
  private takesSinceSweep = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly windowMs = RATE_LIMIT_WINDOW_MS,
    /** Above this many tracked keys, windows that ended are dropped (memory stays bounded). */
    private readonly sweepAbove = 10_000,
  ) {}

  take(keyId: string, limit: number): RateLimitDecision {
    const now = this.now();
    let window = this.windows.get(keyId);
    if (!window || now - window.start >= this.windowMs) {
      window = { start: now, count: 0 };
      this.windows.set(keyId, window);
      if (this.windows.size > this.sweepAbove && ++this.takesSinceSweep >= 1000) this.sweep(now);
    }
    const allowed = window.count < limit;
    if (allowed) window.count += 1;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - window.count),
      resetSeconds: Math.max(1, Math.ceil((window.start + this.windowMs - now) / 1000)),
    };
  }

  /** Forgets a key's count (tests; a changed limit applies from the next window anyway). */
  reset(keyId?: string): void {
    if (keyId === undefined) this.windows.clear();
    else this.windows.delete(keyId);
  }

  private sweep(now: number) {
    this.takesSinceSweep = 0;
    for (const [key, window] of this.windows) {
      if (now - window.start >= this.windowMs) this.windows.delete(key);
    }
  }
}

/**
 * Writes the decision on the answer, whatever its status: the IETF headers
 * (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy` and `RateLimit`) and, for clients of
 * the earlier draft, `RateLimit-Limit` / `-Remaining` / `-Reset`. Beyond the limit it throws the
 * 429 in our envelope, with `Retry-After`.
 */
export function applyRateLimit(reply: FastifyReply, decision: RateLimitDecision): void {
  const { limit, remaining, resetSeconds } = decision;
  reply.header('ratelimit-policy', `${limit};w=${RATE_LIMIT_WINDOW_MS / 1000}`);
  reply.header('ratelimit', `limit=${limit}, remaining=${remaining}, reset=${resetSeconds}`);
  reply.header('ratelimit-limit', String(limit));
  reply.header('ratelimit-remaining', String(remaining));
  reply.header('ratelimit-reset', String(resetSeconds));
  if (!decision.allowed) {
    reply.header('retry-after', String(resetSeconds));
    throw new AppError(429, 'RATE_LIMITED', rateLimitMessage(limit, resetSeconds));
  }
}
