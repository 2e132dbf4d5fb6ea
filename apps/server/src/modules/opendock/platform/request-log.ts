import { randomUUID } from 'node:crypto';
import { type SQL, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../../db/client';

export interface RequestLogRow {
  keyId: string;
  projectId: string;
  at: Date;
  method: string;
  path: string;
  status: number;
  latencyMs: number;
  ip: string;
}

/** A flush every second, or sooner once this many rows wait. */
export const REQUEST_LOG_FLUSH_MS = 1000;
export const REQUEST_LOG_BATCH = 500;
/** What waits while the database is unreachable; beyond it the oldest rows are dropped. */
const MAX_BUFFERED = 50_000;
const MAX_PATH = 500;

/**
 * The open API's request log, written off the request path: rows wait in memory and go to
 * api_key_requests in one INSERT per batch, with the keys' "last used" time and address in one
 * UPDATE per batch. A write per request would make the log, not the route, the cost of a call
 * (the list-calls throughput budget depends on it). The log is an audit aid, not a ledger: rows of
 * a process that is killed (not stopped) in the last second are lost, and a batch the database
 * refuses is dropped with a warning rather than retried forever.
 */
export class RequestLogWriter {
  private buffer: RequestLogRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(
    private readonly db: Database,
    private readonly log: FastifyBaseLogger,
    private readonly flushMs = REQUEST_LOG_FLUSH_MS,
    private readonly batchSize = REQUEST_LOG_BATCH,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.flushMs);
    this.timer.unref();
  }

  /** Stops the timer and writes what is left (called on close, before the database goes). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  record(row: RequestLogRow): void {
    if (row.path.length > MAX_PATH) row.path = row.path.slice(0, MAX_PATH);
    this.buffer.push(row);
    if (this.buffer.length > MAX_BUFFERED) {
      this.buffer.splice(0, this.buffer.length - MAX_BUFFERED);
      if (this.dropped++ % 1000 === 0) this.log.warn('api request log buffer full; oldest rows dropped');
    }
    if (this.buffer.length >= this.batchSize) void this.flush();
  }

  /** Writes every waiting row; concurrent calls queue behind each other, so none is written twice. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      while (this.buffer.length > 0) {
        const batch = this.buffer.splice(0, this.batchSize);
        try {
          await this.write(batch);
        } catch (err) {
          this.log.warn({ err, rows: batch.length }, 'api request log batch not written');
        }
      }
    });
    return this.flushing;
  }

  private async write(batch: RequestLogRow[]): Promise<void> {
    const rows: SQL[] = batch.map(
      (r) =>
        sql`(${randomUUID()}, ${r.keyId}, ${r.projectId}, ${r.at.toISOString()}::timestamptz, ${r.method}, ${r.path}, ${r.status}::int, ${r.latencyMs}::int, ${r.ip})`,
    );
    // A key deleted meanwhile (its project removed) would fail the whole batch on the foreign key:
    // its rows are skipped instead.
    await this.db.execute(sql`
      INSERT INTO api_key_requests (id, key_id, project_id, at, method, path, status, latency_ms, ip)
      SELECT v.* FROM (VALUES ${sql.join(rows, sql`, `)})
        AS v(id, key_id, project_id, at, method, path, status, latency_ms, ip)
      WHERE EXISTS (SELECT 1 FROM api_keys k WHERE k.id = v.key_id)`);
    const latest = new Map<string, RequestLogRow>();
    for (const row of batch) {
      const seen = latest.get(row.keyId);
      if (!seen || seen.at <= row.at) latest.set(row.keyId, row);
    }
    const uses = [...latest.values()].map(
      (r) => sql`(${r.keyId}, ${r.at.toISOString()}::timestamptz, ${r.ip})`,
    );
    await this.db.execute(sql`
      UPDATE api_keys SET last_used_at = v.at, last_used_ip = v.ip
      FROM (VALUES ${sql.join(uses, sql`, `)}) AS v(id, at, ip)
      WHERE api_keys.id = v.id AND (api_keys.last_used_at IS NULL OR api_keys.last_used_at < v.at)`);
  }
}
