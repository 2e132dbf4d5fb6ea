import { type WebhookEventData, type WebhookEventType, webhookPayload } from '@callpilot/contracts';
import { sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import type { webhookDeliveries } from '../../db/schema';
import { type Clock, systemClock } from '../../engine/clock';
import { webhookEventId } from './event-id';

/** Other processes' dispatchers listen here for work enqueued where none runs (ROLE=api). */
export const WEBHOOK_OUTBOX_CHANNEL = 'webhook_outbox';

type Data<T extends WebhookEventType> = WebhookEventData<T>;

/** Rows of a delivery as the outbox writes them; the dispatcher and the log read the same. */
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;

const outboxes = new WeakMap<Database, WebhookOutbox>();

interface QueuedEvent {
  projectId: string;
  eventId: string;
  type: WebhookEventType;
  payload: unknown;
  at: string;
  resolve: (written: number) => void;
  reject: (err: unknown) => void;
}

/**
 * The durable outbox of webhook events: an event becomes one `webhook_deliveries` row per
 * enabled endpoint of the project subscribed to its type, written in one statement where the
 * state it reports is written, so a crash loses at most the event being written. Dispatchers
 * (webhook-dispatcher.ts) deliver the rows; this process's are woken at once, other processes'
 * through NOTIFY when none runs here.
 *
 * Services that only hold the database (do-not-call, task actions) reach the outbox of their
 * database through `WebhookOutbox.for(db)`: the runtime attaches its own (its clock, its
 * dispatcher) and every writer shares it, with no extra parameter to thread through.
 */
export class WebhookOutbox {
  private readonly listeners = new Set<() => void>();
  /** Where a failed enqueue of `publish` is reported (the runtime logs it). */
  onError: (err: unknown, type: WebhookEventType) => void = () => {};

  constructor(
    private readonly db: Database,
    readonly clock: Clock = systemClock,
  ) {}

  /** The outbox of `db`: the runtime's once attached, else one on the system clock. */
  static for(db: Database): WebhookOutbox {
    let outbox = outboxes.get(db);
    if (!outbox) {
      outbox = new WebhookOutbox(db);
      outboxes.set(db, outbox);
    }
    return outbox;
  }

  /**
   * Writers on another connection pool of the same database (the dialer's lane) publish through
   * this database's outbox: an outbox of their own would hold events no delivery loop reads.
   */
  static share(alias: Database, db: Database): void {
    outboxes.set(alias, WebhookOutbox.for(db));
  }

  /** Makes `outbox` the one every writer of its database uses (the runtime's, with its clock). */
  static attach(db: Database, clock: Clock): WebhookOutbox {
    const outbox = new WebhookOutbox(db, clock);
    outboxes.set(db, outbox);
    return outbox;
  }

  /** A dispatcher of this process wants to hear of new rows; returns the unsubscribe function. */
  onEnqueued(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Enqueues `type` for every enabled endpoint of the project subscribed to it; resolves, with how
   * many deliveries were written, once they are in the database. `data` may be a function: it is
   * only called (its queries only run) when some endpoint subscribes, so events of projects
   * without webhooks cost one cheap query.
   *
   * Events enqueued while the previous statement runs go into the next one together (a group
   * commit): one statement per event would cost the embedded database most of a core at 1,000
   * events a second, and every writer still waits until its own event is stored.
   */
  async enqueue<T extends WebhookEventType>(
    projectId: string,
    type: T,
    data: Data<T> | (() => Promise<Data<T> | null>),
    at: Date = new Date(this.clock.now()),
  ): Promise<number> {
    let resolved: Data<T> | null;
    if (typeof data === 'function') {
      if (!(await this.hasSubscribers(projectId, type))) return 0;
      resolved = await data();
      if (!resolved) return 0;
    } else resolved = data;
    const now = this.clock.now();
    return new Promise<number>((resolve, reject) => {
      this.queued.push({
        projectId,
        eventId: webhookEventId(now),
        type,
        payload: webhookPayload(type, resolved, at),
        at: new Date(now).toISOString(),
        resolve,
        reject,
      });
      if (!this.writing) this.writing = this.writeQueued();
    });
  }

  private queued: QueuedEvent[] = [];
  private writing: Promise<void> | null = null;

  /** Writes what is queued, one statement per batch, until nothing is left. */
  private async writeQueued(): Promise<void> {
    // Lets the writers of this turn of the event loop join the first batch.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.queued.length > 0) {
      const batch = this.queued.splice(0, 500);
      try {
        const rows = rowsOf<{ event_id: string }>(
          await this.db.execute(sql`
            insert into webhook_deliveries
              (id, endpoint_id, project_id, event_id, event_type, payload, test, status, attempts,
               next_attempt_at, created_at, updated_at)
            select gen_random_uuid()::text, e.id, e.project_id, x.event_id, x.event_type, x.payload, false,
                   'pending', 0, x.at, x.at, x.at
            from jsonb_to_recordset(${JSON.stringify(
              batch.map((q) => ({
                project_id: q.projectId,
                event_id: q.eventId,
                event_type: q.type,
                payload: q.payload,
                at: q.at,
              })),
            )}::jsonb) as x(project_id text, event_id text, event_type text, payload jsonb, at timestamptz)
            join webhook_endpoints e
              on e.project_id = x.project_id and e.enabled and e.events @> jsonb_build_array(x.event_type)
            returning event_id`),
        );
        const written = new Map<string, number>();
        for (const row of rows) written.set(row.event_id, (written.get(row.event_id) ?? 0) + 1);
        if (rows.length > 0) await this.wake().catch(() => {});
        for (const q of batch) q.resolve(written.get(q.eventId) ?? 0);
      } catch (err) {
        for (const q of batch) q.reject(err);
      }
    }
    this.writing = null;
  }

  /**
   * `enqueue` for writers whose own work must not fail because of it (the state is already
   * written): a failure is reported, not thrown.
   */
  async publish<T extends WebhookEventType>(
    projectId: string,
    type: T,
    data: Data<T> | (() => Promise<Data<T> | null>),
    at?: Date,
  ): Promise<void> {
    try {
      await this.enqueue(projectId, type, data, at);
    } catch (err) {
      this.onError(err, type);
    }
  }

  /**
   * 发送测试事件: the catalogue's sample of `type` to one endpoint (subscribed or not), marked as
   * a test, through the same outbox and dispatcher as real events. Answers the delivery's id.
   */
  async enqueueTest<T extends WebhookEventType>(
    projectId: string,
    endpointId: string,
    type: T,
    data: Data<T>,
  ): Promise<string | null> {
    const now = new Date(this.clock.now());
    const stamp = now.toISOString();
    const payload = JSON.stringify(webhookPayload(type, data, now));
    const rows = await this.db.execute<{ id: string }>(sql`
      insert into webhook_deliveries
        (id, endpoint_id, project_id, event_id, event_type, payload, test, status, attempts,
         next_attempt_at, created_at, updated_at)
      select gen_random_uuid()::text, e.id, e.project_id, ${webhookEventId(now.getTime())}, ${type},
             ${payload}::jsonb, true, 'pending', 0, ${stamp}::timestamptz, ${stamp}::timestamptz, ${stamp}::timestamptz
      from webhook_endpoints e
      where e.project_id = ${projectId} and e.id = ${endpointId}
      returning id`);
    const id = rowsOf<{ id: string }>(rows)[0]?.id ?? null;
    if (id) await this.wake();
    return id;
  }

  /** Whether any enabled endpoint of the project receives `type`. */
  async hasSubscribers(projectId: string, type: WebhookEventType): Promise<boolean> {
    const rows = await this.db.execute(sql`
      select 1 from webhook_endpoints e
      where e.project_id = ${projectId} and e.enabled and e.events @> ${JSON.stringify([type])}::jsonb
      limit 1`);
    return rowsOf(rows).length > 0;
  }

  /** A dispatcher here takes the rows at once; without one, the other processes' are told. */
  private async wake(): Promise<void> {
    if (this.listeners.size > 0) {
      for (const listener of this.listeners) listener();
      return;
    }
    await this.db.execute(sql`select pg_notify(${WEBHOOK_OUTBOX_CHANNEL}, '')`);
  }
}

/** Rows of a raw query: node-postgres answers a result with `rows`, PGlite too. */
export function rowsOf<T = Record<string, unknown>>(result: unknown): T[] {
  return ((result as { rows?: T[] }).rows ?? (result as T[])) as T[];
}

/** Rows a raw insert/update touched, on either driver. */
export function affected(result: unknown): number {
  const r = result as { rowCount?: number | null; affectedRows?: number };
  return r.rowCount ?? r.affectedRows ?? 0;
}
