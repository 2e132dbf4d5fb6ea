import { API_REQUEST_LOG_DAYS, IDEMPOTENCY_KEY_HOURS } from '@callpilot/contracts';
import { lt } from 'drizzle-orm';
import type { Database } from '../../../db/client';
import { apiKeyRequests, idempotencyKeys } from '../../../db/schema';
import { sweepAuditLog } from '../../audit/audit-log.service';
import { deleteExpiredSessions } from '../../auth/sessions.service';

const HOUR_MS = 3600_000;

/**
 * Deletes request-log rows older than 30 days and stored idempotent answers older than 24 hours.
 * Every API process runs it (hourly); running it twice at once deletes nothing twice.
 */
export async function sweepOpendockRetention(db: Database, now = new Date()): Promise<void> {
  await db
    .delete(apiKeyRequests)
    .where(lt(apiKeyRequests.at, new Date(now.getTime() - API_REQUEST_LOG_DAYS * 24 * HOUR_MS)));
  await db
    .delete(idempotencyKeys)
    .where(lt(idempotencyKeys.createdAt, new Date(now.getTime() - IDEMPOTENCY_KEY_HOURS * HOUR_MS)));
}

/** First sweep a minute after start (not during start-up), then hourly. */
export function startRetentionSweep(
  db: Database,
  onError: (err: unknown) => void,
  { firstMs = 60_000, everyMs = HOUR_MS } = {},
): () => void {
  // The audit log and expired sessions ride along: one hourly timer for every table with a retention.
  const run = () => {
    void sweepOpendockRetention(db).catch(onError);
    void sweepAuditLog(db).catch(onError);
    void deleteExpiredSessions(db).catch(onError);
  };
  let every: NodeJS.Timeout | undefined;
  const first = setTimeout(() => {
    run();
    every = setInterval(run, everyMs);
    every.unref();
  }, firstMs);
  first.unref();
  return () => {
    clearTimeout(first);
    if (every) clearInterval(every);
  };
}
