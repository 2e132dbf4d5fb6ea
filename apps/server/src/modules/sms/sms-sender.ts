import type { SmsTimelineEntry } from '@callpilot/contracts';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/client';
import { smsMessages, smsOptOuts, smsTemplates } from '../../db/schema';
import { rowsOf } from '../webhooks/webhook-outbox';
import { OUTBOX_CONTENT_PARAM } from './providers/outbox';
import type { SmsClientResolver, SmsProviderClient, SmsSendResult } from './providers/types';
import { marketingSendAfter, waitingDetail } from './sms-compose';
import { publishSmsDelivered } from './sms-receipts';
import { BLOCK_REASONS } from './sms-send.service';

/** Attempts before a retryable failure (throttled, network, 5xx) becomes final. */
export const SMS_MAX_ATTEMPTS = 5;
const DEFAULT_POLL_MS = 1000;
/** Longer than a send with the client's own timeout and pacing; a dead process's claim expires. */
const DEFAULT_LEASE_MS = 120_000;
const DEFAULT_BATCH = 50;
/** Sends in flight at once; each client paces itself to its vendor's documented rate. */
const DEFAULT_CONCURRENCY = 8;

/** 30 s, 1 min, 2 min, 4 min … after the n-th failed attempt. */
export const smsRetryDelayMs = (attempts: number) => 30_000 * 2 ** Math.max(0, attempts - 1);

interface Claimed {
  id: string;
  projectId: string;
  phone: string;
  signatureName: string;
  templateId: string | null;
  templateType: 'verification' | 'notification' | 'marketing';
  variables: Record<string, string>;
  content: string;
  attempts: number;
  timeline: SmsTimelineEntry[];
}

export interface SmsSenderOptions {
  db: Database;
  clients: SmsClientResolver;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  now?: () => Date;
  pollMs?: number;
  leaseMs?: number;
  batchSize?: number;
  concurrency?: number;
}

const entry = (
  status: SmsTimelineEntry['status'],
  at: Date,
  detail: string | null = null,
): SmsTimelineEntry => ({
  status,
  at: at.toISOString(),
  detail,
});

/**
 * Sends the queue: claims due records (queued, or waiting whose 08:00 came) with `FOR UPDATE SKIP
 * LOCKED` and a lease, so several processes share the table and a crashed one's claims return;
 * re-checks what may have changed since queuing (a 推广 delayed past 20:00 waits again, a number
 * that replied 退订 meanwhile is not sent to); sends through the project's provider client; writes
 * the timeline. A retryable failure is tried again later, up to SMS_MAX_ATTEMPTS.
 */
export class SmsSender {
  private readonly now: () => Date;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;

  constructor(private readonly options: SmsSenderOptions) {
    this.now = options.now ?? (() => new Date());
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Something was queued: send now rather than at the next poll. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.wake();
        return;
      }
      this.timer = setTimeout(() => this.wake(), this.options.pollMs ?? DEFAULT_POLL_MS);
      this.timer.unref();
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private async drain(): Promise<void> {
    try {
      while (!this.stopped && (await this.runOnce()) > 0) {}
    } catch (err) {
      this.options.log.warn({ err }, 'SMS sending pass failed');
    }
  }

  /** One claim and its sends; the number claimed (tests drive the worker with it). */
  async runOnce(): Promise<number> {
    const claimed = await this.claim();
    if (claimed.length === 0) return 0;
    const stillOk = await this.recheck(claimed);
    const templates = await this.templatesOf(stillOk);
    // One settings lookup per project and claim, not per message: the resolver reads the settings'
    // version each time it is asked.
    const clients = new Map<string, Promise<SmsProviderClient>>();
    const clientOf = (projectId: string) => {
      let client = clients.get(projectId);
      if (!client) {
        client = this.options.clients(projectId);
        clients.set(projectId, client);
      }
      return client;
    };
    const queue = [...stillOk];
    const workers = Array.from(
      { length: Math.min(this.options.concurrency ?? DEFAULT_CONCURRENCY, queue.length) },
      async () => {
        for (let message = queue.shift(); message; message = queue.shift()) {
          await this.sendOne(
            message,
            message.templateId ? templates.get(message.templateId) : undefined,
            clientOf,
          );
        }
      },
    );
    await Promise.all(workers);
    return claimed.length;
  }

  private async claim(): Promise<Claimed[]> {
    const now = this.now();
    const leaseUntil = new Date(now.getTime() + (this.options.leaseMs ?? DEFAULT_LEASE_MS));
    const result = await this.options.db.execute(sql`
      update ${smsMessages} set lease_until = ${leaseUntil.toISOString()}::timestamptz, attempts = attempts + 1
      where id in (
        select id from ${smsMessages}
        where status in ('queued', 'waiting') and send_after <= ${now.toISOString()}::timestamptz
          and (lease_until is null or lease_until < ${now.toISOString()}::timestamptz)
        order by send_after
        limit ${this.options.batchSize ?? DEFAULT_BATCH}
        for update skip locked
      )
      returning id, project_id, phone, signature_name, template_id, template_type, variables, content,
        attempts, timeline`);
    return rowsOf<Record<string, unknown>>(result).map((r) => ({
      id: r.id as string,
      projectId: r.project_id as string,
      phone: r.phone as string,
      signatureName: r.signature_name as string,
      templateId: r.template_id as string | null,
      templateType: r.template_type as Claimed['templateType'],
      variables: r.variables as Record<string, string>,
      content: r.content as string,
      attempts: Number(r.attempts),
      timeline: r.timeline as SmsTimelineEntry[],
    }));
  }

  /** Drops (and settles) what may no longer go now; returns what may. */
  private async recheck(claimed: Claimed[]): Promise<Claimed[]> {
    const now = this.now();
    const later = marketingSendAfter(now);
    const optedOut = new Set<string>();
    const gated = claimed.filter((m) => m.templateType !== 'verification');
    for (const projectId of new Set(gated.map((m) => m.projectId))) {
      const phones = gated.filter((m) => m.projectId === projectId).map((m) => m.phone);
      const rows = await this.options.db
        .select({ phone: smsOptOuts.phone })
        .from(smsOptOuts)
        .where(and(eq(smsOptOuts.projectId, projectId), inArray(smsOptOuts.phone, phones)));
      for (const { phone } of rows) optedOut.add(`${projectId}:${phone}`);
    }
    const ok: Claimed[] = [];
    for (const message of claimed) {
      if (message.templateType !== 'verification' && optedOut.has(`${message.projectId}:${message.phone}`)) {
        await this.settle(message, {
          status: 'blocked',
          errorMessage: BLOCK_REASONS.optedOut,
          finishedAt: now,
          timeline: [...message.timeline, entry('blocked', now, BLOCK_REASONS.optedOut)],
        });
      } else if (message.templateType === 'marketing' && later) {
        // Queued in the window but reached after it closed (a long queue): it waits for 08:00 again.
        await this.settle(message, {
          status: 'waiting',
          sendAfter: later,
          attempts: message.attempts - 1,
          timeline: [...message.timeline, entry('waiting', now, waitingDetail(later))],
        });
      } else ok.push(message);
    }
    return ok;
  }

  private async templatesOf(messages: Claimed[]) {
    const ids = [...new Set(messages.map((m) => m.templateId).filter((id): id is string => !!id))];
    const rows = ids.length
      ? await this.options.db
          .select({
            id: smsTemplates.id,
            provider: smsTemplates.provider,
            providerRef: smsTemplates.providerRef,
            variables: smsTemplates.variables,
          })
          .from(smsTemplates)
          .where(inArray(smsTemplates.id, ids))
      : [];
    return new Map(rows.map((r) => [r.id, r]));
  }

  private async sendOne(
    message: Claimed,
    template: { provider: string | null; providerRef: string | null; variables: string[] } | undefined,
    clientOf: (projectId: string) => Promise<SmsProviderClient>,
  ): Promise<void> {
    let result: SmsSendResult;
    let kind: string;
    try {
      const client = await clientOf(message.projectId);
      kind = client.kind;
      if (client.kind === 'outbox') {
        result = await client.send({
          phone: message.phone,
          signName: message.signatureName,
          templateCode: template ? `outbox:${message.templateId}` : 'free_text',
          params: [{ name: OUTBOX_CONTENT_PARAM, value: message.content }],
          outId: message.id,
        });
      } else if (!template) {
        result = {
          ok: false,
          code: 'NO_TEMPLATE',
          message: '运营商只接收已审核的模板短信，自由文本无法通过云服务商发送',
          retryable: false,
        };
      } else if (template.provider !== client.kind || !template.providerRef) {
        result = {
          ok: false,
          code: 'TEMPLATE_NOT_AT_PROVIDER',
          message: '该模板未在当前短信服务商处审核通过：请在模板管理中重新提交审核',
          retryable: false,
        };
      } else {
        result = await client.send({
          phone: message.phone,
          signName: message.signatureName,
          templateCode: template.providerRef,
          params: template.variables.map((name) => ({ name, value: message.variables[name] ?? '' })),
          outId: message.id,
        });
      }
    } catch (err) {
      this.options.log.warn({ err, smsId: message.id }, 'SMS send failed');
      kind = 'unknown';
      result = { ok: false, code: 'NETWORK', message: '连接短信服务商失败', retryable: true };
    }
    const now = this.now();
    if (result.ok) {
      const outbox = kind === 'outbox';
      const timeline = [...message.timeline, entry('submitted', now)];
      if (outbox) {
        timeline.push(
          entry('accepted', now),
          entry('delivered', now, '开发发件箱：未实际发送，内容可在发件箱查看'),
        );
      }
      await this.settle(message, {
        status: outbox ? 'delivered' : 'submitted',
        providerMessageId: result.providerMessageId,
        submittedAt: now,
        finishedAt: outbox ? now : null,
        errorCode: null,
        errorMessage: null,
        timeline,
      });
      return;
    }
    if (result.retryable && message.attempts < SMS_MAX_ATTEMPTS) {
      await this.settle(message, {
        status: 'queued',
        sendAfter: new Date(now.getTime() + smsRetryDelayMs(message.attempts)),
        errorCode: result.code,
        errorMessage: `${result.message}（第 ${message.attempts} 次尝试，稍后重试）`,
      });
      return;
    }
    await this.settle(message, {
      status: 'failed',
      errorCode: result.code,
      errorMessage: result.message,
      finishedAt: now,
      timeline: [...message.timeline, entry('failed', now, result.message)],
    });
  }

  private async settle(message: Claimed, change: Partial<typeof smsMessages.$inferInsert>): Promise<void> {
    await this.options.db
      .update(smsMessages)
      .set({ ...change, leaseUntil: null })
      .where(eq(smsMessages.id, message.id));
    // The outbox delivers at once and a final failure gets no receipt: the webhook is sent from here,
    // as sms-receipts.ts sends it for a vendor's receipt.
    if (change.status === 'delivered' || change.status === 'failed') {
      await publishSmsDelivered(this.options.db, message.projectId, {
        id: message.id,
        phone: message.phone,
        status: change.status,
        at: change.finishedAt ?? this.now(),
      }).catch((err) => this.options.log.warn({ err, smsId: message.id }, 'sms.delivered not enqueued'));
    }
  }
}
