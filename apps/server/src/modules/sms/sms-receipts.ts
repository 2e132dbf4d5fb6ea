import { randomUUID } from 'node:crypto';
import { normalizeMobile, type SmsTimelineEntry } from '@callpilot/contracts';
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { smsMessages, smsReplies } from '../../db/schema';
import { WebhookOutbox } from '../webhooks/webhook-outbox';
import { ALIYUN_SMS_ERRORS } from './providers/aliyun-sms-errors';
import { describeTencentError } from './providers/tencent-errors';
import type { SmsDeliveryReceipt, SmsInboundReply, SmsProviderKind } from './providers/types';
import { isOptOutReply } from './sms-compose';
import { recordOptOut } from './sms-send.service';

/** States a receipt may still change: the vendor took the message and has not reported yet. */
const AWAITING_RECEIPT = ['submitted', 'accepted'] as const;

/**
 * The carrier's or vendor's reason for a failed delivery, in Chinese where the error tables know
 * the code, else as the vendor wrote it (carrier codes such as MK:0001 are the vendor's to explain).
 */
export function receiptFailureText(
  provider: SmsProviderKind,
  code: string | null,
  vendorMessage: string | null,
): string {
  const vendorKnown =
    provider === 'aliyun'
      ? code
        ? ALIYUN_SMS_ERRORS[code]?.zh
        : undefined
      : provider === 'tencent' && code
        ? tencentKnown(code)
        : undefined;
  const known = vendorKnown ?? (code ? carrierKnown(code) : undefined);
  const vendor = vendorMessage && vendorMessage !== code ? vendorMessage : null;
  const parts = [known, vendor, code && !vendor?.includes(code) ? code : null].filter(
    (p): p is string => !!p,
  );
  if (parts.length === 0) return '运营商报告发送失败';
  const [head, ...rest] = [...new Set(parts)];
  return rest.length ? `${head}（${rest.join('，')}）` : (head as string);
}

/**
 * Carrier status codes (the gateways' CMPP/SGIP 状态报告) that both vendors pass through unchanged
 * in receipts, by family: the vendor's own err_msg / description usually says more and is kept.
 */
const CARRIER_CODES: [pattern: RegExp, zh: string][] = [
  [/^(MK|MN|MI|LT|IC|IB|ID|CB|CJ):?\d+$/i, '号码状态异常（空号、停机、关机或无法接通）'],
  [/^UNDELIV$/i, '运营商未能送达（号码状态异常）'],
  [/^EXPIRED$/i, '超过有效期未送达（手机长时间关机或不在服务区）'],
  [/^REJECTD?$/i, '被运营商拒绝'],
  [/^(BLACK|BLACKLIST|BLOCKED|PUBLOKD)$/i, '号码在运营商黑名单中'],
  [/^BEYOND[MHD]$/i, '超出运营商对该号码的发送频率限制'],
];

const carrierKnown = (code: string) => CARRIER_CODES.find(([pattern]) => pattern.test(code))?.[1];

function tencentKnown(code: string): string | undefined {
  const { zh } = describeTencentError(code);
  // The table's last resort says nothing about this code.
  return zh === '腾讯云短信返回错误' ? undefined : zh;
}

/**
 * Applies one delivery receipt: the record (found by provider + provider message id and number,
 * else by our id echoed back as outId) becomes delivered or failed, with the reason, finished_at
 * and a timeline entry, and 'sms.delivered' is enqueued. Only a record still awaiting its receipt
 * changes, so a repeated push or a poll racing a push changes nothing the second time. Returns the
 * id of the record changed, or null.
 */
export async function applySmsReceipt(
  db: Database,
  projectId: string,
  provider: SmsProviderKind,
  receipt: SmsDeliveryReceipt,
): Promise<string | null> {
  const phone = normalizeMobile(receipt.phone);
  const finishedAt = receipt.reportedAt;
  const failed = receipt.status === 'failed';
  const detail = failed ? receiptFailureText(provider, receipt.errorCode, receipt.errorMessage) : null;
  const entry: SmsTimelineEntry = { status: receipt.status, at: finishedAt.toISOString(), detail };
  const set = {
    status: receipt.status,
    errorCode: failed ? (receipt.errorCode ?? 'FAILED') : null,
    errorMessage: detail,
    finishedAt,
    leaseUntil: null,
    timeline: sql`${smsMessages.timeline} || ${JSON.stringify([entry])}::jsonb`,
  };
  const awaiting = inArray(smsMessages.status, [...AWAITING_RECEIPT]);
  let [row] = await db
    .update(smsMessages)
    .set(set)
    .where(
      and(
        eq(smsMessages.projectId, projectId),
        eq(smsMessages.provider, provider),
        eq(smsMessages.providerMessageId, receipt.providerMessageId),
        eq(smsMessages.phone, phone),
        awaiting,
      ),
    )
    .returning({ id: smsMessages.id, phone: smsMessages.phone });
  if (!row && receipt.outId) {
    [row] = await db
      .update(smsMessages)
      .set(set)
      .where(
        and(
          eq(smsMessages.projectId, projectId),
          eq(smsMessages.provider, provider),
          eq(smsMessages.id, receipt.outId),
          awaiting,
        ),
      )
      .returning({ id: smsMessages.id, phone: smsMessages.phone });
  }
  if (!row) return null;
  await publishSmsDelivered(db, projectId, {
    id: row.id,
    phone: row.phone,
    status: receipt.status,
    at: finishedAt,
  });
  return row.id;
}

/**
 * 'sms.delivered' for a message that reached its final state (a receipt here; the sending worker
 * may call it for the outbox's immediate delivery and a final send failure).
 */
export function publishSmsDelivered(
  db: Database,
  projectId: string,
  message: { id: string; phone: string; status: 'delivered' | 'failed'; at: Date },
): Promise<void> {
  return WebhookOutbox.for(db).publish(
    projectId,
    'sms.delivered',
    { smsId: message.id, phone: message.phone, status: message.status, at: message.at.toISOString() },
    message.at,
  );
}

/**
 * Stores a reply (上行). One that opts out (T, TD, 退订, R, N on its own) puts the number on the
 * project's do-not-disturb list with the reply as its reason; a number already there keeps its
 * first entry. Returns whether the reply opted out.
 */
export async function applySmsReply(
  db: Database,
  projectId: string,
  provider: SmsProviderKind,
  reply: SmsInboundReply,
): Promise<{ optedOut: boolean }> {
  const phone = normalizeMobile(reply.phone);
  // A vendor pushes again when our answer was lost: the same reply at the same time is stored once.
  const [seen] = await db
    .select({ id: smsReplies.id })
    .from(smsReplies)
    .where(
      and(
        eq(smsReplies.projectId, projectId),
        eq(smsReplies.phone, phone),
        eq(smsReplies.receivedAt, reply.receivedAt),
        eq(smsReplies.content, reply.content),
      ),
    )
    .limit(1);
  if (seen) return { optedOut: isOptOutReply(reply.content) };
  await db.insert(smsReplies).values({
    id: randomUUID(),
    projectId,
    phone,
    content: reply.content,
    provider,
    receivedAt: reply.receivedAt,
  });
  if (!isOptOutReply(reply.content)) return { optedOut: false };
  await recordOptOut(db, projectId, phone, 'reply', reply.content, reply.receivedAt);
  return { optedOut: true };
}
