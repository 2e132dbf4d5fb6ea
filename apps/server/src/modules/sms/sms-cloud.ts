import fs from 'node:fs/promises';
import path from 'node:path';
import { SMS_PROVIDER_LABELS } from '@callpilot/contracts';
import { and, desc, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../../db/client';
import { smsMessages, smsSignatures, smsTemplates } from '../../db/schema';
import { type Clock, systemClock } from '../../engine/clock';
import { AppError, conflict } from '../../lib/errors';
import { rowsOf } from '../webhooks/webhook-outbox';
import { AliyunSmsError } from './providers/aliyun-sms';
import { TencentSmsError } from './providers/tencent-errors';
import type { SmsClientResolver, SmsReviewState } from './providers/types';
import { applySmsReceipt } from './sms-receipts';
import {
  type CloudReviewSubmit,
  decideReview,
  type SignatureRow,
  type SmsReviewKind,
  type TemplateRow,
} from './sms-review.service';

type CloudProvider = 'aliyun' | 'tencent';

/**
 * A vendor's refusal or failure as the console shows it: what the vendor (or the client on its
 * behalf) said, already in Chinese and free of secrets, as a 400 when the request itself was
 * refused and a 502 when the vendor could not be reached or failed. Anything else is a bug and
 * stays a 500.
 */
export function vendorError(provider: CloudProvider, err: unknown): unknown {
  const label = SMS_PROVIDER_LABELS[provider];
  if (err instanceof AliyunSmsError || err instanceof TencentSmsError) {
    const unreachable =
      err.retryable ||
      (err instanceof AliyunSmsError && err.status !== null && err.status >= 500) ||
      /^(NETWORK|TIMEOUT|ClientError\.Network|ClientError\.Http)/.test(err.code);
    if (unreachable) return new AppError(502, 'UPSTREAM_FAILED', `${label}暂时无法处理请求：${err.message}`);
    // Refused by the client before anything was sent (a source the vendor no longer takes, a
    // missing 资质 ID or proof): not the vendor's words.
    const ours = /^(MISSING_|UNSUPPORTED_|PRIVATE_ADDRESS|ClientError\.)/.test(err.code);
    return new AppError(
      400,
      'BAD_REQUEST',
      `${ours ? `无法提交到${label}` : `${label}拒绝了请求`}：${err.message}`,
    );
  }
  return err;
}

/**
 * Submits a signature or template to the project's cloud provider: a signature with its proof
 * file (base64), a template with its content, type and remark and, for Aliyun, an approved Aliyun
 * signature it will be sent under (CreateSmsTemplate's RelatedSignName).
 */
export function cloudReviewSubmitter(
  db: Database,
  resolve: SmsClientResolver,
  projectId: string,
): CloudReviewSubmit {
  return async (provider, row) => {
    const client = await resolve(projectId);
    if (client.kind !== provider) throw conflict(`短信服务商设置已变化，请刷新后重试`);
    try {
      if ('source' in row) {
        const signature = row as SignatureRow;
        const proof = signature.proofPath
          ? {
              fileName: signature.proofName ?? path.basename(signature.proofPath),
              base64: (await readProof(signature.proofPath)).toString('base64'),
            }
          : null;
        return await client.submitSignature({
          name: signature.name,
          source: signature.source,
          remark: signature.remark,
          proof,
        });
      }
      const template = row as TemplateRow;
      let signName: string | undefined;
      if (provider === 'aliyun') {
        const [related] = await db
          .select({ name: smsSignatures.name })
          .from(smsSignatures)
          .where(
            and(
              eq(smsSignatures.projectId, projectId),
              eq(smsSignatures.status, 'approved'),
              eq(smsSignatures.provider, 'aliyun'),
            ),
          )
          .orderBy(desc(smsSignatures.reviewedAt))
          .limit(1);
        if (!related)
          throw conflict('阿里云申请模板需关联一个已通过审核的阿里云签名：请先提交签名并等待审核通过');
        signName = related.name;
      }
      return await client.submitTemplate({
        name: template.name,
        type: template.type,
        content: template.content,
        remark: template.remark,
        signName,
      });
    } catch (err) {
      throw vendorError(provider, err);
    }
  };
}

async function readProof(file: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch {
    throw conflict('签名证明材料文件已丢失，请重新上传后再提交');
  }
}

const DEFAULT_REVIEW_INTERVAL_MS = 5 * 60_000;

interface PollerOptions {
  db: Database;
  resolve: SmsClientResolver;
  log: FastifyBaseLogger;
  clock?: Clock;
}

/** A background job on a timer that `stop()` ends, waiting for the round in flight. */
abstract class IntervalJob {
  private timer: ReturnType<typeof setInterval> | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly intervalMs: number) {}

  abstract poll(): Promise<unknown>;

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  protected abstract onError(err: unknown): void;

  private async tick(): Promise<void> {
    if (this.running) return;
    this.running = this.poll().catch((err) => this.onError(err));
    await this.running;
    this.running = null;
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}

/**
 * Asks the vendor about every signature and template under its review and applies the answer with
 * decideReview (approved, or rejected with the vendor's reason). Vendors push no review results
 * we could receive without more console setup, and reviews take hours, so every 5 minutes is
 * plenty; one item's failure (a deleted item, an expired key) is logged and the others go on.
 */
export class SmsReviewPoller extends IntervalJob {
  private readonly options: PollerOptions;

  constructor(options: PollerOptions & { intervalMs?: number }) {
    super(options.intervalMs ?? DEFAULT_REVIEW_INTERVAL_MS);
    this.options = options;
  }

  protected onError(err: unknown): void {
    this.options.log.warn({ err }, 'sms review poll failed');
  }

  /** One round; resolves with how many items were decided. */
  async poll(): Promise<number> {
    let decided = 0;
    for (const kind of ['signature', 'template'] as const) {
      const table = kind === 'signature' ? smsSignatures : smsTemplates;
      const rows = await this.options.db
        .select({
          id: table.id,
          projectId: table.projectId,
          provider: table.provider,
          ref: table.providerRef,
        })
        .from(table)
        .where(
          and(
            eq(table.status, 'reviewing'),
            inArray(table.provider, ['aliyun', 'tencent']),
            isNotNull(table.providerRef),
          ),
        );
      for (const row of rows) {
        try {
          if (
            await this.pollOne(
              kind,
              row as { id: string; projectId: string; provider: CloudProvider; ref: string },
            )
          )
            decided++;
        } catch (err) {
          this.options.log.warn({ err: safeError(err), kind, id: row.id }, 'sms review query failed');
        }
      }
    }
    return decided;
  }

  private async pollOne(
    kind: SmsReviewKind,
    row: { id: string; projectId: string; provider: CloudProvider; ref: string },
  ): Promise<boolean> {
    const client = await this.options.resolve(row.projectId);
    // Submitted under another provider than the project's now: its keys are gone, nothing to ask.
    if (client.kind !== row.provider) return false;
    let state: SmsReviewState;
    try {
      state =
        kind === 'signature' ? await client.querySignature(row.ref) : await client.queryTemplate(row.ref);
    } catch (err) {
      // Deleted in the vendor's console while under review: it will never be approved.
      if (err instanceof TencentSmsError && /IdNotExist$/.test(err.code))
        state = { status: 'rejected', reason: '已在腾讯云控制台删除' };
      else throw err;
    }
    if (state.status === 'reviewing') return false;
    const now = (this.options.clock ?? systemClock).now();
    await decideReview(
      this.options.db,
      kind,
      row.id,
      state.status === 'approved'
        ? { approve: true }
        : {
            approve: false,
            reason: state.reason?.trim() || `${SMS_PROVIDER_LABELS[row.provider]}审核未通过`,
          },
      now,
    ).catch((err) => {
      // Withdrawn or decided meanwhile: nothing left to apply.
      if (!(err instanceof AppError && err.statusCode === 409)) throw err;
    });
    return true;
  }
}

/** Vendor errors carry only their code and Chinese message; anything else is logged as it is. */
function safeError(err: unknown): unknown {
  if (err instanceof AliyunSmsError || err instanceof TencentSmsError)
    return { name: err.name, code: err.code, message: err.message };
  return err;
}

export interface SmsReceiptPollerOptions extends PollerOptions {
  /** How often the job runs (default 1 minute). */
  intervalMs?: number;
  /** A message is asked about once it has waited this long for a push (default 10 minutes). */
  afterMs?: number;
  /** And again no sooner than this after the last ask (default 10 minutes). */
  everyMs?: number;
  /** Vendors keep send details for days; after this (default 72 h) the message is left as it is. */
  maxAgeMs?: number;
  batchSize?: number;
}

/**
 * For vendors (or projects) without a receipt push: messages submitted or accepted for more than
 * `afterMs` and less than `maxAgeMs` are asked about with querySendDetails, each at most every
 * `everyMs`. A message is claimed with FOR UPDATE SKIP LOCKED and its lease_until moved to the next
 * allowed ask, so processes share the work and a message is not asked twice in that time; the
 * sending worker's lease is over once a message is submitted. Receipts apply as pushed ones do.
 */
export class SmsReceiptPoller extends IntervalJob {
  private readonly options: SmsReceiptPollerOptions;

  constructor(options: SmsReceiptPollerOptions) {
    super(options.intervalMs ?? 60_000);
    this.options = options;
  }

  protected onError(err: unknown): void {
    this.options.log.warn({ err }, 'sms receipt poll failed');
  }

  /** One round; resolves with how many receipts were applied. */
  async poll(): Promise<number> {
    const { db } = this.options;
    const now = (this.options.clock ?? systemClock).now();
    const afterMs = this.options.afterMs ?? 10 * 60_000;
    const everyMs = this.options.everyMs ?? 10 * 60_000;
    const maxAgeMs = this.options.maxAgeMs ?? 72 * 3_600_000;
    const at = (ms: number) => new Date(ms).toISOString();
    const claimed = rowsOf<{
      id: string;
      projectId: string;
      provider: string;
      phone: string;
      providerMessageId: string;
      submittedAt: string | Date;
    }>(
      await db.execute(sql`
        update ${smsMessages} m
        set lease_until = ${at(now + everyMs)}::timestamptz
        from (
          select m2.id from ${smsMessages} m2
          where m2.status in ('submitted', 'accepted')
            and m2.provider in ('aliyun', 'tencent')
            and m2.provider_message_id is not null
            and m2.submitted_at <= ${at(now - afterMs)}::timestamptz
            and m2.submitted_at > ${at(now - maxAgeMs)}::timestamptz
            and (m2.lease_until is null or m2.lease_until < ${at(now)}::timestamptz)
          order by m2.submitted_at
          limit ${this.options.batchSize ?? 100}
          for update of m2 skip locked
        ) due
        where m.id = due.id
        returning m.id, m.project_id as "projectId", m.provider, m.phone,
          m.provider_message_id as "providerMessageId", m.submitted_at as "submittedAt"`),
    );
    let applied = 0;
    for (const row of claimed) {
      try {
        const client = await this.options.resolve(row.projectId);
        if (client.kind !== row.provider) continue;
        const receipt = await client.querySendDetails(
          row.phone,
          row.providerMessageId,
          new Date(row.submittedAt),
        );
        if (!receipt) continue;
        if (
          await applySmsReceipt(db, row.projectId, client.kind, {
            ...receipt,
            outId: receipt.outId ?? row.id,
          })
        )
          applied++;
      } catch (err) {
        this.options.log.warn({ err: safeError(err), id: row.id }, 'sms receipt query failed');
      }
    }
    return applied;
  }
}

export { DEFAULT_REVIEW_INTERVAL_MS };
