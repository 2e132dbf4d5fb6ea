import { randomUUID } from 'node:crypto';
import {
  type Paged,
  WEBHOOK_DROPPED_ERROR,
  WEBHOOK_EVENT_CATALOGUE,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookDeliveryDetail,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookEndpointCreateRequest,
  type WebhookEndpointUpdateRequest,
  type WebhookEventType,
} from '@callpilot/contracts';
import { and, asc, count, desc, eq, gte, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { webhookAttempts, webhookDeliveries, webhookEndpoints } from '../../db/schema';
import { badRequest, conflict, notFound } from '../../lib/errors';
import { hostVerdict, type ResolveHost } from '../../lib/outbound-http';
import { type AppSecret, decryptSecret, encryptSecret } from '../../lib/secret-box';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import { generateWebhookSecret } from './webhook-signing';

/** Enough for every system a project connects; more is a script gone wrong. */
export const MAX_WEBHOOK_ENDPOINTS = 20;

export const WEBHOOK_URL_PRIVATE_REFUSED =
  '字段 url：接收地址指向内网地址（私有、回环、链路本地、ULA 或 CGNAT），已拒绝；运营方可设置 WEBHOOK_ALLOW_PRIVATE=true 允许';

type EndpointRow = typeof webhookEndpoints.$inferSelect;
type DeliveryRow = typeof webhookDeliveries.$inferSelect;
type AttemptRow = typeof webhookAttempts.$inferSelect;

const iso = (date: Date | null | undefined) => (date ? date.toISOString() : null);

/** Signing secrets reach receivers' code: only the project's owner and admins manage endpoints. */
export function assertCanManageWebhooks(project: ProjectAccess): void {
  requireManager(project, '仅项目所有者或管理员可以管理 Webhook');
}

export const endpointNotFound = () => notFound('Webhook 接收地址不存在');
export const deliveryNotFound = () => notFound('投递记录不存在');

export function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    eventId: row.eventId,
    eventType: row.eventType as WebhookEventType,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.lastStatusCode,
    lastDurationMs: row.lastDurationMs,
    lastError: row.lastError,
    nextAttemptAt: row.status === 'pending' ? iso(row.nextAttemptAt) : null,
    createdAt: row.createdAt.toISOString(),
    test: row.test,
  };
}

function toAttempt(row: AttemptRow): WebhookAttempt {
  return {
    id: row.id,
    at: row.at.toISOString(),
    trigger: row.trigger,
    statusCode: row.statusCode,
    durationMs: row.durationMs,
    error: row.error,
    requestHeaders: row.requestHeaders,
    responseBody: row.responseBody,
  };
}

export interface WebhookServiceOptions {
  /** Seals signing secrets (lib/secret-box.ts). */
  secret: AppSecret;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  /** Name resolution for the private-address check (tests answer their own). */
  resolve?: ResolveHost;
  now: () => number;
}

/** Endpoints, their secrets and their delivery log, as the console manages them. */
export class WebhookService {
  constructor(
    private readonly db: Database,
    private readonly options: WebhookServiceOptions,
  ) {}

  private now(): Date {
    return new Date(this.options.now());
  }

  private async row(projectId: string, endpointId: string): Promise<EndpointRow> {
    const [row] = await this.db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.projectId, projectId), eq(webhookEndpoints.id, endpointId)))
      .limit(1);
    if (!row) throw endpointNotFound();
    return row;
  }

  /** Deliveries of the last 24 hours per endpoint and status, for the list. */
  private async recent(projectId: string, endpointId?: string) {
    const since = new Date(this.now().getTime() - 24 * 3600_000);
    const rows = await this.db
      .select({
        endpointId: webhookDeliveries.endpointId,
        status: webhookDeliveries.status,
        n: count(),
        dropped: sql<number>`cast(count(*) filter (where ${webhookDeliveries.lastError} = ${WEBHOOK_DROPPED_ERROR}) as int)`,
      })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.projectId, projectId),
          endpointId ? eq(webhookDeliveries.endpointId, endpointId) : undefined,
          gte(webhookDeliveries.createdAt, since),
        ),
      )
      .groupBy(webhookDeliveries.endpointId, webhookDeliveries.status);
    const byEndpoint = new Map<string, WebhookEndpoint['recent']>();
    for (const r of rows) {
      const recent = byEndpoint.get(r.endpointId) ?? { succeeded: 0, failed: 0, pending: 0, dropped: 0 };
      recent[r.status as WebhookDeliveryStatus] = r.n;
      recent.dropped += Number(r.dropped);
      byEndpoint.set(r.endpointId, recent);
    }
    return byEndpoint;
  }

  private toEndpoint(row: EndpointRow, recent?: WebhookEndpoint['recent']): WebhookEndpoint {
    const now = this.now();
    return {
      id: row.id,
      url: row.url,
      description: row.description,
      events: row.events as WebhookEventType[],
      enabled: row.enabled,
      disabledReason: row.enabled ? null : (row.disabledReason ?? 'manual'),
      disabledAt: row.enabled ? null : iso(row.disabledAt),
      failingSince: iso(row.failingSince),
      previousSecretUntil:
        row.previousSecret && row.previousSecretUntil && row.previousSecretUntil > now
          ? row.previousSecretUntil.toISOString()
          : null,
      createdAt: row.createdAt.toISOString(),
      recent: recent ?? { succeeded: 0, failed: 0, pending: 0, dropped: 0 },
    };
  }

  async list(projectId: string): Promise<WebhookEndpoint[]> {
    const rows = await this.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.projectId, projectId))
      .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
    const recent = await this.recent(projectId);
    return rows.map((row) => this.toEndpoint(row, recent.get(row.id)));
  }

  async get(projectId: string, endpointId: string): Promise<WebhookEndpoint> {
    const row = await this.row(projectId, endpointId);
    return this.toEndpoint(row, (await this.recent(projectId, endpointId)).get(endpointId));
  }

  /** Refuses URLs on private networks unless the operator allows them (checked again when sending). */
  private async checkUrl(url: string): Promise<void> {
    if (this.options.allowPrivate) return;
    let verdict: Awaited<ReturnType<typeof hostVerdict>>;
    try {
      verdict = await hostVerdict(new URL(url), {
        resolve: this.options.resolve,
        signal: AbortSignal.timeout(5000),
      });
    } catch {
      // A name that does not resolve in time is checked when a delivery connects.
      verdict = 'unresolved';
    }
    if (verdict === 'refused') throw badRequest(WEBHOOK_URL_PRIVATE_REFUSED);
  }

  private checkEvents(events: WebhookEventType[] | undefined): void {
    const unavailable = (events ?? []).filter((type) => !WEBHOOK_EVENT_CATALOGUE[type].available);
    if (unavailable.length > 0) {
      throw badRequest(`字段 events：事件 ${unavailable.join('、')} 尚未提供，不能订阅`);
    }
  }

  async create(
    project: ProjectAccess,
    userId: string | null,
    body: WebhookEndpointCreateRequest,
  ): Promise<WebhookEndpoint> {
    assertCanManageWebhooks(project);
    this.checkEvents(body.events);
    await this.checkUrl(body.url);
    const [existing] = await this.db
      .select({ n: count() })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.projectId, project.id));
    if ((existing?.n ?? 0) >= MAX_WEBHOOK_ENDPOINTS) {
      throw conflict(`每个项目最多 ${MAX_WEBHOOK_ENDPOINTS} 个 Webhook 接收地址`);
    }
    const now = this.now();
    const [row] = await this.db
      .insert(webhookEndpoints)
      .values({
        id: randomUUID(),
        projectId: project.id,
        url: body.url,
        description: body.description,
        events: body.events,
        secret: encryptSecret(this.options.secret, generateWebhookSecret()),
        createdBy: userId,
        createdAt: now,
        updatedAt: now,
      })
      .returning();
    return this.toEndpoint(row as EndpointRow);
  }

  async update(
    project: ProjectAccess,
    endpointId: string,
    body: WebhookEndpointUpdateRequest,
  ): Promise<WebhookEndpoint> {
    assertCanManageWebhooks(project);
    const row = await this.row(project.id, endpointId);
    this.checkEvents(body.events);
    if (body.url !== undefined && body.url !== row.url) await this.checkUrl(body.url);
    const now = this.now();
    const set: Partial<typeof webhookEndpoints.$inferInsert> = { updatedAt: now };
    if (body.url !== undefined) set.url = body.url;
    if (body.description !== undefined) set.description = body.description;
    if (body.events !== undefined) set.events = body.events;
    if (body.enabled === true && !row.enabled) {
      // Back on: the failure streak starts over, and the deliveries still pending go out.
      Object.assign(set, { enabled: true, disabledReason: null, disabledAt: null, failingSince: null });
    } else if (body.enabled === false && row.enabled) {
      Object.assign(set, { enabled: false, disabledReason: 'manual', disabledAt: now });
    }
    await this.db
      .update(webhookEndpoints)
      .set(set)
      .where(and(eq(webhookEndpoints.projectId, project.id), eq(webhookEndpoints.id, endpointId)));
    return this.get(project.id, endpointId);
  }

  async remove(project: ProjectAccess, endpointId: string): Promise<void> {
    assertCanManageWebhooks(project);
    const removed = await this.db
      .delete(webhookEndpoints)
      .where(and(eq(webhookEndpoints.projectId, project.id), eq(webhookEndpoints.id, endpointId)))
      .returning({ id: webhookEndpoints.id });
    if (removed.length === 0) throw endpointNotFound();
  }

  async revealSecret(project: ProjectAccess, endpointId: string): Promise<{ secret: string }> {
    assertCanManageWebhooks(project);
    const row = await this.row(project.id, endpointId);
    return { secret: decryptSecret(this.options.secret, row.secret) };
  }

  /**
   * A new secret signs from now on; the old one keeps signing beside it (both signatures sent)
   * for `graceHours`, so a receiver switches over without missing an event.
   */
  async rollSecret(
    project: ProjectAccess,
    endpointId: string,
    graceHours: number,
  ): Promise<{ secret: string }> {
    assertCanManageWebhooks(project);
    const row = await this.row(project.id, endpointId);
    const secret = generateWebhookSecret();
    const now = this.now();
    await this.db
      .update(webhookEndpoints)
      .set({
        secret: encryptSecret(this.options.secret, secret),
        previousSecret: graceHours > 0 ? row.secret : null,
        previousSecretUntil: graceHours > 0 ? new Date(now.getTime() + graceHours * 3600_000) : null,
        updatedAt: now,
      })
      .where(and(eq(webhookEndpoints.projectId, project.id), eq(webhookEndpoints.id, endpointId)));
    return { secret };
  }

  /** The endpoint of a test event: it must exist here and be on (a disabled one sends nothing). */
  async testTarget(project: ProjectAccess, endpointId: string): Promise<void> {
    assertCanManageWebhooks(project);
    const row = await this.row(project.id, endpointId);
    if (!row.enabled) throw conflict('接收地址已停用，请先启用后再发送测试事件');
  }

  async deliveries(
    projectId: string,
    endpointId: string,
    query: {
      page: number;
      pageSize: number;
      status: 'all' | WebhookDeliveryStatus;
      eventType?: WebhookEventType;
    },
  ): Promise<Paged<WebhookDelivery>> {
    await this.row(projectId, endpointId);
    const conditions: SQL[] = [
      eq(webhookDeliveries.projectId, projectId),
      eq(webhookDeliveries.endpointId, endpointId),
    ];
    if (query.status !== 'all') conditions.push(eq(webhookDeliveries.status, query.status));
    if (query.eventType) conditions.push(eq(webhookDeliveries.eventType, query.eventType));
    const where = and(...conditions);
    const [total] = await this.db.select({ n: count() }).from(webhookDeliveries).where(where);
    const rows = await this.db
      .select()
      .from(webhookDeliveries)
      .where(where)
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.eventId))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize);
    return { items: rows.map(toDelivery), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
  }

  async delivery(projectId: string, endpointId: string, deliveryId: string): Promise<WebhookDeliveryDetail> {
    const [row] = await this.db
      .select()
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.projectId, projectId),
          eq(webhookDeliveries.endpointId, endpointId),
          eq(webhookDeliveries.id, deliveryId),
        ),
      )
      .limit(1);
    if (!row) throw deliveryNotFound();
    const attempts = await this.db
      .select()
      .from(webhookAttempts)
      .where(eq(webhookAttempts.deliveryId, deliveryId))
      .orderBy(asc(webhookAttempts.at), asc(webhookAttempts.id));
    const payload = row.payload as { type: string; timestamp: string; data: unknown };
    return {
      ...toDelivery(row),
      // In the order it is sent (jsonb keeps keys sorted).
      payload: { type: payload.type, timestamp: payload.timestamp, data: payload.data },
      attemptLog: attempts.map(toAttempt),
    };
  }

  /** The delivery's row once its first attempt is recorded, or as it is after `waitMs`. */
  async awaitFirstAttempt(projectId: string, deliveryId: string, waitMs: number): Promise<WebhookDelivery> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const [row] = await this.db
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.projectId, projectId), eq(webhookDeliveries.id, deliveryId)))
        .limit(1);
      if (!row) throw deliveryNotFound();
      if (row.attempts > 0 || row.status !== 'pending' || Date.now() >= deadline) return toDelivery(row);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  assertCanManage(project: ProjectAccess): void {
    assertCanManageWebhooks(project);
  }

  /** Whether the delivery exists under this endpoint of the project (for the replay route). */
  async assertDelivery(projectId: string, endpointId: string, deliveryId: string): Promise<void> {
    const [row] = await this.db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.projectId, projectId),
          eq(webhookDeliveries.endpointId, endpointId),
          eq(webhookDeliveries.id, deliveryId),
        ),
      )
      .limit(1);
    if (!row) throw deliveryNotFound();
  }
}
