import type { FastifyReply } from 'fastify';
import { AppError } from '../../../lib/errors';
import type { RateLimitCounter } from '../../../plugins/rate-limits';

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
 * Counts each key's requests in a fixed window that opens with its first request, on the
 * deployment's rate-limit counter (plugins/rate-limits.ts): in memory on the embedded database,
 * in table rate_limit_hits on PostgreSQL, so N API processes behind a balancer together allow a
 * key its limit, not N times it. It is our own rather than @fastify/rate-limit because the plugin
 * writes only the older `RateLimit-*` draft headers, keeps one counter per route rather than per
 * key, and would run outside the key check, so 401/403 answers could not carry the key's numbers.
 */
export class KeyRateLimiter {
  constructor(
    private readonly counter: RateLimitCounter,
    private readonly windowMs = RATE_LIMIT_WINDOW_MS,
  ) {}

  async take(keyId: string, limit: number): Promise<RateLimitDecision> {
    const { hits, ttlMs } = await this.counter.hit(`apikey:${keyId}`, this.windowMs);
    return {
      allowed: hits <= limit,
      limit,
      remaining: Math.max(0, limit - hits),
      resetSeconds: Math.max(1, Math.ceil(ttlMs / 1000)),
    };
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
