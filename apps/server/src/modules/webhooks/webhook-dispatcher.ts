import { randomUUID } from 'node:crypto';
import {
  WEBHOOK_DELIVERY_LOG_DAYS,
  WEBHOOK_DISABLE_AFTER_MS,
  WEBHOOK_DROPPED_ERROR,
  WEBHOOK_PENDING_CAP,
  WEBHOOK_RETRY_DELAYS_MS,
  WEBHOOK_TIMEOUT_MS,
} from '@callpilot/contracts';
import { sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/client';
import { type AppSecret, decryptSecret } from '../../lib/secret-box';
import type { EmailSender } from '../../providers';
import { affected, rowsOf, type WebhookOutbox } from './webhook-outbox';
import type { WebhookSender, WebhookSendResult } from './webhook-sender';
import { webhookHeaders } from './webhook-signing';

/** Each retry's delay varies by up to this share either way, so a receiver coming back is not hit by every retry at once. */
export const WEBHOOK_JITTER = 0.2;
/** Deliveries sent at once by one process. */
const DEFAULT_CONCURRENCY = 64;
/** Rows claimed per query. */
const DEFAULT_BATCH = 200;
/** Fallback when no wake-up arrives: retries fall due, another process's NOTIFY was missed. */
const DEFAULT_POLL_MS = 1000;
/** A claim outlives the 15 s timeout with room to record; a process that dies leaves it to expire. */
const DEFAULT_LEASE_MS = WEBHOOK_TIMEOUT_MS * 4;
const SWEEP_EVERY_MS = 3600_000;
/** Between two trims an endpoint's backlog can exceed the cap by what arrives in this long. */
const TRIM_EVERY_MS = 10_000;
/**
 * Wake-ups within this window share one claim, and attempts finishing within it one write: at
 * 1,000 events a second that is tens of queries a second instead of thousands, for a few ms of delay.
 */
const COALESCE_MS = 5;
const WRITE_COALESCE_MS = 10;
const VACUUM_AFTER_SETTLED = 1000;
const VACUUM_EVERY_MS = 5000;
const DAY_MS = 24 * 3600_000;

/** A claimed delivery with what it takes to send it. */
interface Claimed {
  id: string;
  endpointId: string;
  projectId: string;
  eventId: string;
  eventType: string;
  payload: { type: string; timestamp: string; data: unknown };
  /** Automatic attempts made before this one. */
  attempts: number;
}

interface EndpointTarget {
  id: string;
  projectId: string;
  url: string;
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  /** As read when the delivery was claimed: a success only needs to clear a streak there is. */
  failingSince: Date | null;
}

type Outcome = 'succeeded' | 'retry' | 'failed' | 'gone';

interface AttemptRecord {
  id: string;
  deliveryId: string;
  endpointId: string;
  projectId: string;
  at: Date;
  trigger: 'auto' | 'replay';
  result: WebhookSendResult;
  headers: Record<string, string>;
  outcome: Outcome;
  /** The endpoint had a failure streak when the delivery was claimed. */
  endpointWasFailing: boolean;
  /** Automatic attempts including this one (replays leave it unchanged). */
  attempts: number;
  nextAttemptAt: Date | null;
}

export interface WebhookDispatcherOptions {
  db: Database;
  /** The outbox whose enqueues wake this dispatcher; its clock is the dispatcher's. */
  outbox: WebhookOutbox;
  /** Unseals endpoints' signing secrets (lib/secret-box.ts). */
  secret: AppSecret;
  /** This process: the owner of the leases it takes. */
  owner: string;
  sender: WebhookSender;
  /** Where the owner of an endpoint disabled for failing is told. */
  email: EmailSender;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /** The console's address, for the link in that e-mail. */
  consoleUrl?: string | null;
  concurrency?: number;
  batchSize?: number;
  pollMs?: number;
  leaseMs?: number;
  /** [0, 1): the jitter's randomness (tests pin it). */
  random?: () => number;
  /**
   * Vacuum the outbox now and then: the embedded database has no autovacuum, and every settled
   * delivery leaves a dead entry in the index of due rows that each claim would read again.
   */
  vacuum?: boolean;
  /** Pending deliveries kept per endpoint (WEBHOOK_PENDING_CAP; tests lower it). */
  pendingCap?: number;
}

/** The delay before automatic attempt `attempt + 1` (1-based), jittered; null when the schedule is exhausted. */
export function retryDelay(attemptsMade: number, random: () => number = Math.random): number | null {
  const base = WEBHOOK_RETRY_DELAYS_MS[attemptsMade];
  if (base === undefined) return null;
  return Math.round(base * (1 + (random() * 2 - 1) * WEBHOOK_JITTER));
}

const idList = (ids: string[]) =>
  sql.join(
    ids.map((id) => sql`${id}`),
    sql`, `,
  );

/** The body as sent: the payload's own field order (jsonb stores keys sorted), the same bytes on every attempt. */
const bodyOf = (payload: Claimed['payload']) =>
  JSON.stringify({ type: payload.type, timestamp: payload.timestamp, data: payload.data });

/**
 * Delivers the outbox: claims due rows (`FOR UPDATE SKIP LOCKED`, with a lease) in batches,
 * sends them concurrently (bounded), records each attempt and schedules the next by the retry
 * schedule with jitter, or marks the delivery succeeded (2xx) or failed (schedule exhausted,
 * or 410 Gone, which also disables the endpoint). An endpoint failing without a success for
 * 5 days is disabled and the project's owner e-mailed. Several processes share the table.
 *
 * Woken at once by enqueues in this process (and, through the runtime, by NOTIFY from others);
 * polls every second as a fallback. `stop()` lets the deliveries in flight finish and records
 * them, so a restart neither loses nor repeats one.
 */
export class WebhookDispatcher {
  private readonly db: Database;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private readonly secrets = new Map<string, Buffer | string>();
  private readonly inFlight = new Set<Promise<void>>();
  private results: AttemptRecord[] = [];
  private flushing: Promise<void> | null = null;
  private pumping: Promise<void> | null = null;
  private wanted = false;
  private backlog = false;
  private started = false;
  private stopped = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private trimTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.db = options.db;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.random = options.random ?? Math.random;
  }

  private now(): Date {
    return new Date(this.options.outbox.clock.now());
  }

  /** Starts the loop: enqueues wake it, a timer polls, an hourly sweep keeps 30 days of log. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.unsubscribe = this.options.outbox.onEnqueued(() => this.wake());
    this.pollTimer = setInterval(() => {
      this.wake();
      this.maybeVacuum();
    }, this.options.pollMs ?? DEFAULT_POLL_MS);
    this.pollTimer.unref();
    this.sweepTimer = setInterval(() => {
      this.sweep().catch((err) => this.options.log.warn({ err }, 'webhook log sweep failed'));
    }, SWEEP_EVERY_MS);
    this.sweepTimer.unref();
    this.trimTimer = setInterval(() => {
      this.trimBacklog().catch((err) => this.options.log.warn({ err }, 'webhook backlog trim failed'));
    }, TRIM_EVERY_MS);
    this.trimTimer.unref();
    this.wake();
  }

  private settledSinceVacuum = 0;
  private lastVacuum = 0;
  private vacuuming: Promise<void> | null = null;

  private maybeVacuum(): void {
    if (!this.options.vacuum || this.vacuuming || this.settledSinceVacuum < VACUUM_AFTER_SETTLED) return;
    if (Date.now() - this.lastVacuum < VACUUM_EVERY_MS) return;
    this.settledSinceVacuum = 0;
    this.lastVacuum = Date.now();
    this.vacuuming = this.db
      .execute(sql`vacuum (analyze) webhook_deliveries`)
      .then(() => undefined)
      .catch((err) => this.options.log.warn({ err }, 'webhook outbox vacuum failed'))
      .finally(() => {
        this.vacuuming = null;
      });
  }

  /** Stops claiming, lets the deliveries in flight finish, records them. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    clearInterval(this.pollTimer);
    clearInterval(this.sweepTimer);
    clearInterval(this.trimTimer);
    await this.pumping;
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.flush();
    await this.vacuuming;
  }

  /** New rows may be due: claim them now (coalesced: a burst of wake-ups is one claim loop). */
  wake(): void {
    if (!this.started || this.stopped) return;
    this.wanted = true;
    if (this.pumping) return;
    this.pumping = new Promise<void>((resolve) => setTimeout(resolve, COALESCE_MS))
      .then(() => this.pump())
      .catch((err) => this.options.log.warn({ err }, 'webhook dispatch failed'))
      .finally(() => {
        this.pumping = null;
        if (this.wanted && !this.stopped) this.wake();
      });
  }

  private async pump(): Promise<void> {
    while (this.wanted && !this.stopped) {
      this.wanted = false;
      while (!this.stopped) {
        const room = this.concurrency - this.inFlight.size;
        if (room <= 0) {
          // Full: a finishing delivery wakes the loop again.
          this.backlog = true;
          return;
        }
        const want = Math.min(room, this.batchSize);
        const claimed = await this.claim(want);
        this.backlog = claimed.length === want;
        if (claimed.length > 0) await this.launch(claimed);
        if (!this.backlog) break;
      }
    }
  }

  /**
   * Claims and sends every due delivery, then waits until they are recorded: one step of the
   * loop for tests on a fake clock (no timers involved). Answers how many were attempted.
   */
  async runDue(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.claim(this.batchSize);
      if (claimed.length === 0) break;
      total += claimed.length;
      await this.launch(claimed);
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    }
    await this.flush();
    return total;
  }

  private async claim(limit: number): Promise<Claimed[]> {
    const now = this.now();
    const until = new Date(now.getTime() + this.leaseMs);
    const result = await this.db.execute(sql`
      update webhook_deliveries d
      set lease_owner = ${this.options.owner}, lease_until = ${until.toISOString()}::timestamptz
      from (
        select d2.id from webhook_deliveries d2
        join webhook_endpoints e on e.id = d2.endpoint_id
        where d2.status = 'pending'
          and d2.next_attempt_at <= ${now.toISOString()}::timestamptz
          and (d2.lease_until is null or d2.lease_until < ${now.toISOString()}::timestamptz)
          and e.enabled
        order by d2.next_attempt_at
        limit ${limit}
        for update of d2 skip locked
      ) due
      where d.id = due.id
      returning d.id, d.endpoint_id as "endpointId", d.project_id as "projectId", d.event_id as "eventId",
        d.event_type as "eventType", d.payload, d.attempts`);
    return rowsOf<Claimed>(result);
  }

  private async endpoints(ids: string[]): Promise<Map<string, EndpointTarget>> {
    const result = await this.db.execute(sql`
      select id, project_id as "projectId", url, secret, previous_secret as "previousSecret",
        previous_secret_until as "previousSecretUntil", failing_since as "failingSince"
      from webhook_endpoints where id in (${idList(ids)})`);
    return new Map(
      rowsOf<EndpointTarget>(result).map((row) => [
        row.id,
        {
          ...row,
          previousSecretUntil: row.previousSecretUntil ? new Date(row.previousSecretUntil) : null,
          failingSince: row.failingSince ? new Date(row.failingSince) : null,
        },
      ]),
    );
  }

  private async launch(claimed: Claimed[]): Promise<void> {
    const targets = await this.endpoints([...new Set(claimed.map((c) => c.endpointId))]);
    for (const delivery of claimed) {
      const target = targets.get(delivery.endpointId);
      if (!target) continue;
      const work: Promise<void> = this.attempt(delivery, target, 'auto')
        .then((record) => this.record(record))
        .catch((err) => this.options.log.warn({ err, deliveryId: delivery.id }, 'webhook attempt failed'))
        .finally(() => {
          this.inFlight.delete(work);
          if (this.backlog) this.wake();
        });
      this.inFlight.add(work);
    }
  }

  /** The secrets that sign now: the current one, and the previous one during a roll's overlap. */
  private signingKeys(target: EndpointTarget, at: Date): (Buffer | string)[] {
    const unseal = (sealed: string) => {
      let plain = this.secrets.get(sealed);
      if (plain === undefined) {
        if (this.secrets.size > 1000) this.secrets.clear();
        plain = decryptSecret(this.options.secret, sealed);
        this.secrets.set(sealed, plain);
      }
      return plain;
    };
    const keys = [unseal(target.secret)];
    if (target.previousSecret && target.previousSecretUntil && target.previousSecretUntil > at)
      keys.push(unseal(target.previousSecret));
    return keys;
  }

  /** Signs (fresh timestamp) and sends one delivery; answers the attempt with its consequence. */
  private async attempt(
    delivery: Claimed,
    target: EndpointTarget,
    trigger: 'auto' | 'replay',
  ): Promise<AttemptRecord> {
    const at = this.now();
    const body = bodyOf(delivery.payload);
    const headers = webhookHeaders(
      this.signingKeys(target, at),
      delivery.eventId,
      Math.floor(at.getTime() / 1000),
      body,
    );
    const result = await this.options.sender.send(target.url, headers, body);
    const code = result.statusCode;
    const ok = result.error === null && code !== null && code >= 200 && code < 300;
    let outcome: Outcome;
    let attempts = delivery.attempts;
    let nextAttemptAt: Date | null = null;
    if (ok) outcome = 'succeeded';
    else if (code === 410) outcome = 'gone';
    else outcome = 'retry';
    if (trigger === 'auto') {
      attempts += 1;
      if (outcome === 'retry') {
        const delay = retryDelay(attempts, this.random);
        if (delay === null) outcome = 'failed';
        else nextAttemptAt = new Date(this.now().getTime() + delay);
      }
    }
    return {
      id: randomUUID(),
      deliveryId: delivery.id,
      endpointId: target.id,
      projectId: target.projectId,
      at,
      trigger,
      result,
      headers,
      outcome,
      endpointWasFailing: target.failingSince !== null,
      attempts,
      nextAttemptAt,
    };
  }

  private record(record: AttemptRecord): void {
    this.results.push(record);
    this.scheduleWrite();
  }

  /** One write at a time; attempts finishing meanwhile go into the next one. */
  private scheduleWrite(): void {
    if (this.flushing || this.results.length === 0) return;
    this.flushing = new Promise<void>((resolve) => setTimeout(resolve, WRITE_COALESCE_MS))
      .then(() => this.writeResults())
      .finally(() => {
        this.flushing = null;
        this.scheduleWrite();
      });
  }

  /** Waits until every attempt made so far is in the database. */
  private async flush(): Promise<void> {
    while (this.flushing || this.results.length > 0) {
      if (this.flushing) await this.flushing;
      else await this.writeResults();
    }
  }

  /** Writes the attempts collected since the last write in one transaction: 1,000 a second stay cheap. */
  private async writeResults(): Promise<void> {
    const batch = this.results;
    this.results = [];
    if (batch.length === 0) return;
    try {
      await this.db.transaction(async (tx) => {
        await this.writeAttempts(tx as unknown as Database, batch);
      });
    } catch (err) {
      // One bad row (its endpoint deleted meanwhile) must not lose the others' results.
      this.options.log.warn({ err, count: batch.length }, 'webhook results written one by one');
      for (const record of batch) {
        await this.writeAttempts(this.db, [record]).catch((e) =>
          this.options.log.warn({ err: e, deliveryId: record.deliveryId }, 'webhook result lost'),
        );
      }
    }
    await this.endpointEffects(batch).catch((err) =>
      this.options.log.warn({ err }, 'webhook endpoint state update failed'),
    );
  }

  private async writeAttempts(db: Database, batch: AttemptRecord[]): Promise<void> {
    this.settledSinceVacuum += batch.length;
    const attempts = JSON.stringify(
      batch.map((r) => ({
        id: r.id,
        delivery_id: r.deliveryId,
        at: r.at.toISOString(),
        trigger: r.trigger,
        status_code: r.result.statusCode,
        duration_ms: r.result.durationMs,
        error: r.result.error,
        request_headers: r.headers,
        response_body: r.result.responseBody,
      })),
    );
    await db.execute(sql`
      insert into webhook_attempts (id, delivery_id, at, trigger, status_code, duration_ms, error, request_headers, response_body)
      select x.id, x.delivery_id, x.at, x.trigger, x.status_code, x.duration_ms, x.error, x.request_headers, x.response_body
      from jsonb_to_recordset(${attempts}::jsonb) as x(id text, delivery_id text, at timestamptz, trigger text,
        status_code int, duration_ms int, error text, request_headers jsonb, response_body text)
      -- The id list lets the planner look deliveries up by key instead of scanning the table.
      where x.delivery_id in (select d.id from webhook_deliveries d where d.id in (${idList(batch.map((r) => r.deliveryId))}))`);
    const auto = batch.filter((r) => r.trigger === 'auto');
    if (auto.length > 0) {
      const updates = JSON.stringify(
        auto.map((r) => ({
          id: r.deliveryId,
          status: r.outcome === 'succeeded' ? 'succeeded' : r.outcome === 'retry' ? 'pending' : 'failed',
          attempts: r.attempts,
          next_attempt_at: r.nextAttemptAt?.toISOString() ?? null,
          status_code: r.result.statusCode,
          duration_ms: r.result.durationMs,
          error: r.result.error,
          at: r.at.toISOString(),
        })),
      );
      // Only while the lease is still ours: a lease that expired belongs to whoever took it since.
      await db.execute(sql`
        update webhook_deliveries d
        set status = x.status, attempts = x.attempts, next_attempt_at = x.next_attempt_at,
          lease_owner = null, lease_until = null, last_status_code = x.status_code,
          last_duration_ms = x.duration_ms, last_error = x.error, updated_at = x.at
        from jsonb_to_recordset(${updates}::jsonb) as x(id text, status text, attempts int,
          next_attempt_at timestamptz, status_code int, duration_ms int, error text, at timestamptz)
        where d.id = x.id and d.id in (${idList(auto.map((r) => r.deliveryId))})
          and d.lease_owner = ${this.options.owner}`);
    }
    for (const r of batch.filter((b) => b.trigger === 'replay')) {
      // A replay leaves the schedule alone unless it got through: then the delivery is done.
      await db.execute(sql`
        update webhook_deliveries
        set last_status_code = ${r.result.statusCode}, last_duration_ms = ${r.result.durationMs},
          last_error = ${r.result.error}, updated_at = ${r.at.toISOString()}::timestamptz,
          status = case when ${r.outcome === 'succeeded'} then 'succeeded' else status end,
          next_attempt_at = case when ${r.outcome === 'succeeded'} then null else next_attempt_at end
        where id = ${r.deliveryId}`);
    }
  }

  /**
   * What attempts tell about their endpoints: a success ends a failure streak; a failure starts
   * one (or continues it, and 5 days of it disable the endpoint); a 410 disables it at once.
   */
  private async endpointEffects(batch: AttemptRecord[]): Promise<void> {
    const streaks = new Map<string, { cleared: boolean; since: Date | null; wasFailing: boolean }>();
    const gone = new Set<string>();
    for (const r of [...batch].sort((a, b) => a.at.getTime() - b.at.getTime())) {
      const streak = streaks.get(r.endpointId) ?? { cleared: false, since: null, wasFailing: false };
      streak.wasFailing ||= r.endpointWasFailing;
      if (r.outcome === 'succeeded') {
        streak.cleared = true;
        streak.since = null;
      } else {
        streak.since ??= r.at;
        if (r.outcome === 'gone') gone.add(r.endpointId);
      }
      streaks.set(r.endpointId, streak);
    }
    const now = this.now();
    if (gone.size > 0) {
      await this.db.execute(sql`
        update webhook_endpoints
        set enabled = false, disabled_reason = 'gone', disabled_at = ${now.toISOString()}::timestamptz,
          updated_at = ${now.toISOString()}::timestamptz
        where enabled and id in (${idList([...gone])})`);
    }
    const failing: string[] = [];
    for (const [endpointId, streak] of streaks) {
      if (streak.since === null) {
        // Nothing to clear (the common case: a healthy endpoint costs no query here).
        if (!streak.wasFailing) continue;
        await this.db.execute(
          sql`update webhook_endpoints set failing_since = null where id = ${endpointId} and failing_since is not null`,
        );
        continue;
      }
      const since = streak.since.toISOString();
      await this.db.execute(sql`
        update webhook_endpoints
        set failing_since = ${streak.cleared ? sql`${since}::timestamptz` : sql`coalesce(failing_since, ${since}::timestamptz)`}
        where id = ${endpointId}`);
      failing.push(endpointId);
    }
    if (failing.length === 0) return;
    const threshold = new Date(now.getTime() - WEBHOOK_DISABLE_AFTER_MS).toISOString();
    const disabled = rowsOf<{ id: string; projectId: string; url: string; failingSince: string }>(
      await this.db.execute(sql`
        update webhook_endpoints
        set enabled = false, disabled_reason = 'failing', disabled_at = ${now.toISOString()}::timestamptz,
          updated_at = ${now.toISOString()}::timestamptz
        where enabled and failing_since <= ${threshold}::timestamptz and id in (${idList(failing)})
        returning id, project_id as "projectId", url, failing_since as "failingSince"`),
    );
    for (const endpoint of disabled) await this.tellOwners(endpoint);
  }

  private async tellOwners(endpoint: { id: string; projectId: string; url: string; failingSince: string }) {
    const owners = rowsOf<{ email: string; project: string }>(
      await this.db.execute(sql`
        select u.email, p.name as project from memberships m
        join users u on u.id = m.user_id join projects p on p.id = m.project_id
        where m.project_id = ${endpoint.projectId} and m.role = 'owner'`),
    );
    const since = new Date(endpoint.failingSince);
    const link = this.options.consoleUrl
      ? `\n查看投递日志并重新启用：${this.options.consoleUrl.replace(/\/$/, '')}/developer-options/webhooks`
      : '';
    for (const owner of owners) {
      await this.options.email
        .send({
          to: owner.email,
          subject: `【${owner.project}】Webhook 接收地址已自动停用`,
          text:
            `项目「${owner.project}」的 Webhook 接收地址 ${endpoint.url} 自 ${since.toISOString()} 起连续 5 天投递失败，` +
            `已自动停用，之后的事件不再投递到该地址。\n修复接收方后，可在 开发者选项 → Webhooks 中重新启用，` +
            `尚未过期的待投递事件会继续发送。${link}`,
        })
        .catch((err) =>
          this.options.log.warn({ err, endpointId: endpoint.id }, 'webhook disable e-mail failed'),
        );
    }
    this.options.log.warn({ endpointId: endpoint.id }, 'webhook endpoint disabled after 5 days of failures');
  }

  /**
   * 重新发送: sends a delivery now, re-signed with a fresh timestamp, same webhook-id, recorded
   * as a replay. The automatic schedule stays as it was unless this attempt succeeds (then the
   * delivery is done). Answers once the attempt is recorded, so the log shows its result.
   */
  async replay(projectId: string, deliveryId: string): Promise<boolean> {
    const rows = rowsOf<Claimed>(
      await this.db.execute(sql`
        select d.id, d.endpoint_id as "endpointId", d.project_id as "projectId", d.event_id as "eventId",
          d.event_type as "eventType", d.payload, d.attempts
        from webhook_deliveries d where d.id = ${deliveryId} and d.project_id = ${projectId}`),
    );
    const delivery = rows[0];
    if (!delivery) return false;
    const target = (await this.endpoints([delivery.endpointId])).get(delivery.endpointId);
    if (!target) return false;
    const record = await this.attempt(delivery, target, 'replay');
    await this.writeAttempts(this.db, [record]);
    await this.endpointEffects([record]);
    return true;
  }

  /**
   * Keeps each endpoint's backlog within the cap: beyond it the oldest pending deliveries not
   * being sent right now are marked failed with WEBHOOK_DROPPED_ERROR (kept in the log, counted
   * in the endpoint list). A receiver that hangs for days would otherwise grow the outbox, and
   * every claim's scan of it, without bound. Answers how many were dropped.
   */
  async trimBacklog(): Promise<number> {
    const cap = this.options.pendingCap ?? WEBHOOK_PENDING_CAP;
    const now = this.now().toISOString();
    const dropped = rowsOf<{ endpointId: string }>(
      await this.db.execute(sql`
        update webhook_deliveries d
        set status = 'failed', next_attempt_at = null, last_error = ${WEBHOOK_DROPPED_ERROR},
          updated_at = ${now}::timestamptz
        from (
          select id from (
            select id, lease_until,
              row_number() over (partition by endpoint_id order by created_at desc, id desc) as newer
            from webhook_deliveries
            where status = 'pending' and endpoint_id in (
              select endpoint_id from webhook_deliveries where status = 'pending'
              group by endpoint_id having count(*) > ${cap})
          ) ranked
          where ranked.newer > ${cap} and (ranked.lease_until is null or ranked.lease_until < ${now}::timestamptz)
        ) excess
        where d.id = excess.id and d.status = 'pending'
        returning d.endpoint_id as "endpointId"`),
    );
    if (dropped.length > 0) {
      const byEndpoint: Record<string, number> = {};
      for (const row of dropped) byEndpoint[row.endpointId] = (byEndpoint[row.endpointId] ?? 0) + 1;
      this.options.log.warn(
        { dropped: byEndpoint, cap },
        'webhook backlog over the cap: oldest deliveries dropped',
      );
    }
    return dropped.length;
  }

  /** Deletes deliveries (and their attempts) older than the log keeps; answers how many. */
  async sweep(): Promise<number> {
    const before = new Date(this.now().getTime() - WEBHOOK_DELIVERY_LOG_DAYS * DAY_MS).toISOString();
    let total = 0;
    for (;;) {
      // In slices, so a month of a busy project does not hold one long delete.
      const removed = affected(
        await this.db.execute(sql`
          delete from webhook_deliveries where id in (
            select id from webhook_deliveries where created_at < ${before}::timestamptz limit 5000)`),
      );
      total += removed;
      if (removed < 5000) return total;
    }
  }
}
