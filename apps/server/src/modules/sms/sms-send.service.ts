import { randomUUID } from 'node:crypto';
import {
  MAINLAND_MOBILE,
  normalizeMobile,
  type SmsMessage,
  type SmsMessageStatus,
  type SmsOptOut,
  type SmsSource,
  type SmsTemplateType,
  type SmsTimelineEntry,
  smsParts,
} from '@callpilot/contracts';
import { and, count, desc, eq, gte, like, notInArray, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  doNotCall,
  smsMessages,
  smsOptOuts,
  smsSettings,
  smsSignatures,
  smsTemplates,
} from '../../db/schema';
import { badRequest, conflict, notFound } from '../../lib/errors';
import { chinaDayStartOf, composeSms, marketingSendAfter, waitingDetail } from './sms-compose';
import { toSmsMessage } from './sms-message-view';

/**
 * Every SMS the product sends is queued here as a record; the sending worker (sms-sender.ts) sends
 * it. Single sends, follow-up rules, the assistant's and flows' requests and the open API all come
 * through these functions, so the same rules hold for all: approved signature and template, the
 * do-not-disturb lists, the daily cap per number, 推广 only in 08:00–20:00 China time.
 */

export interface EnqueueSmsInput {
  projectId: string;
  /** A mainland mobile number (normalized by the caller's schema or here). */
  phone: string;
  signatureId: string;
  templateId: string;
  variables: Record<string, string>;
  source: SmsSource;
  callId?: string | null;
  taskId?: string | null;
  batchId?: string | null;
  ruleId?: string | null;
  createdBy?: string | null;
}

const DEFAULT_DAILY_CAP = 5;

/**
 * Normalized numbers (digits only) as one text[] parameter: a batch checks 100,000 at once, which
 * as a parameter list would exceed PostgreSQL's 65,535 and crawl on PGlite.
 */
const phoneArray = (phones: string[]) => sql`string_to_array(${phones.join(',')}, ',')`;

export const BLOCK_REASONS = {
  optedOut: '该号码已回复退订，在短信免打扰名单中',
  doNotCall: '该号码在项目免打扰名单中',
  dailyCap: (cap: number) => `该号码今日已收到 ${cap} 条短信，达到每号码每日上限`,
} as const;

/** The project's provider and daily cap (the outbox and 5 until someone sets them). */
export async function smsSendingSettings(db: Database, projectId: string) {
  const [row] = await db
    .select({ provider: smsSettings.provider, dailyCap: smsSettings.dailyCapPerNumber })
    .from(smsSettings)
    .where(eq(smsSettings.projectId, projectId));
  return { provider: row?.provider ?? 'outbox', dailyCap: row?.dailyCap ?? DEFAULT_DAILY_CAP };
}

/**
 * Why each of `phones` may not get an SMS of `type` now, if it may not. Both lists stop 推广 and
 * 通知; a 验证码 goes through them, because the recipient asked for it this minute and refusing it
 * would lock them out (the vendors treat 退订 the same way). The daily cap counts every SMS to the
 * number since 00:00 China time that was not itself blocked; `pending` adds sends decided in the
 * same breath (a batch counts its own earlier rows).
 */
export async function smsBlockReasons(
  db: Database,
  projectId: string,
  phones: string[],
  type: SmsTemplateType,
  now: Date,
  options: { dailyCap: number; pending?: Map<string, number> },
): Promise<Map<string, string>> {
  const reasons = new Map<string, string>();
  const unique = [...new Set(phones)];
  if (unique.length === 0) return reasons;
  if (type !== 'verification') {
    const [optedOut, refused] = await Promise.all([
      db
        .select({ phone: smsOptOuts.phone })
        .from(smsOptOuts)
        .where(
          and(eq(smsOptOuts.projectId, projectId), sql`${smsOptOuts.phone} = any(${phoneArray(unique)})`),
        ),
      db
        .select({ phone: doNotCall.phone })
        .from(doNotCall)
        .where(and(eq(doNotCall.projectId, projectId), sql`${doNotCall.phone} = any(${phoneArray(unique)})`)),
    ]);
    for (const { phone } of refused) reasons.set(phone, BLOCK_REASONS.doNotCall);
    for (const { phone } of optedOut) reasons.set(phone, BLOCK_REASONS.optedOut);
  }
  if (options.dailyCap > 0) {
    const rest = unique.filter((phone) => !reasons.has(phone));
    const sentToday = rest.length
      ? await db
          .select({ phone: smsMessages.phone, n: count() })
          .from(smsMessages)
          .where(
            and(
              eq(smsMessages.projectId, projectId),
              sql`${smsMessages.phone} = any(${phoneArray(rest)})`,
              gte(smsMessages.createdAt, chinaDayStartOf(now)),
              notInArray(smsMessages.status, ['blocked']),
            ),
          )
          .groupBy(smsMessages.phone)
      : [];
    const counts = new Map(sentToday.map((r) => [r.phone, Number(r.n)]));
    for (const phone of rest) {
      const n = (counts.get(phone) ?? 0) + (options.pending?.get(phone) ?? 0);
      if (n >= options.dailyCap) reasons.set(phone, BLOCK_REASONS.dailyCap(options.dailyCap));
    }
  }
  return reasons;
}

/** The approved signature and template a send names, or a 4xx saying which is not usable. */
export async function approvedSignatureAndTemplate(
  db: Database,
  projectId: string,
  signatureId: string,
  templateId: string,
) {
  const [[signature], [template]] = await Promise.all([
    db
      .select()
      .from(smsSignatures)
      .where(and(eq(smsSignatures.projectId, projectId), eq(smsSignatures.id, signatureId))),
    db
      .select()
      .from(smsTemplates)
      .where(and(eq(smsTemplates.projectId, projectId), eq(smsTemplates.id, templateId))),
  ]);
  if (!signature) throw notFound('签名不存在');
  if (!template) throw notFound('模板不存在');
  if (signature.status !== 'approved') throw conflict(`签名【${signature.name}】尚未通过审核，不能用于发送`);
  if (template.status !== 'approved') throw conflict(`模板「${template.name}」尚未通过审核，不能用于发送`);
  return { signature, template };
}

const entry = (status: SmsMessageStatus, at: Date, detail: string | null = null): SmsTimelineEntry => ({
  status,
  at: at.toISOString(),
  detail,
});

/** The first state of a record: blocked with its reason, waiting for 08:00, or queued. */
export function initialState(type: SmsTemplateType, now: Date, blockReason: string | undefined) {
  if (blockReason) {
    return {
      status: 'blocked' as const,
      sendAfter: now,
      errorMessage: blockReason,
      finishedAt: now,
      timeline: [entry('blocked', now, blockReason)],
    };
  }
  const later = type === 'marketing' ? marketingSendAfter(now) : null;
  if (later) {
    return {
      status: 'waiting' as const,
      sendAfter: later,
      errorMessage: null,
      finishedAt: null,
      timeline: [entry('waiting', now, waitingDetail(later))],
    };
  }
  return {
    status: 'queued' as const,
    sendAfter: now,
    errorMessage: null,
    finishedAt: null,
    timeline: [entry('queued', now)],
  };
}

/** What started a send, as its record keeps it (linked to the call, task, batch or rule). */
const originOf = (input: Omit<EnqueueSmsInput, 'variables'>) => ({
  source: input.source,
  callId: input.callId ?? null,
  taskId: input.taskId ?? null,
  batchId: input.batchId ?? null,
  ruleId: input.ruleId ?? null,
  createdBy: input.createdBy ?? null,
});

/** Queues one templated SMS; see the file comment for the rules. */
export async function enqueueSms(
  db: Database,
  input: EnqueueSmsInput,
  now = new Date(),
): Promise<SmsMessage> {
  const phone = normalizeMobile(input.phone.trim());
  if (!MAINLAND_MOBILE.test(phone)) throw badRequest('手机号须为 11 位中国大陆手机号');
  const { signature, template } = await approvedSignatureAndTemplate(
    db,
    input.projectId,
    input.signatureId,
    input.templateId,
  );
  const composed = composeSms(signature.name, template.content, input.variables);
  if (!composed.ok) throw badRequest(composed.message);
  const settings = await smsSendingSettings(db, input.projectId);
  const blocks = await smsBlockReasons(db, input.projectId, [phone], template.type, now, {
    dailyCap: settings.dailyCap,
  });
  const variables = Object.fromEntries(
    template.variables.map((name) => [name, input.variables[name]?.trim() ?? '']),
  );
  const [row] = await db
    .insert(smsMessages)
    .values({
      id: randomUUID(),
      projectId: input.projectId,
      phone,
      signatureId: signature.id,
      signatureName: signature.name,
      templateId: template.id,
      templateName: template.name,
      templateType: template.type,
      variables,
      content: composed.content,
      parts: composed.parts,
      provider: settings.provider,
      ...initialState(template.type, now, blocks.get(phone)),
      ...originOf(input),
      createdAt: now,
    })
    .returning();
  return toSmsMessage(row!);
}

/**
 * A send that could not even be queued (a follow-up rule whose template is no longer approved, a
 * variable the call had no value for, a callee who is not a mobile): recorded as 未发送 with the
 * reason, so the operator sees it in 发送记录 rather than a log line nobody reads.
 */
export async function recordUnsendable(
  db: Database,
  input: Omit<EnqueueSmsInput, 'variables'> & { reason: string },
  now = new Date(),
): Promise<SmsMessage> {
  const [[signature], [template], settings] = await Promise.all([
    db
      .select({ name: smsSignatures.name })
      .from(smsSignatures)
      .where(and(eq(smsSignatures.projectId, input.projectId), eq(smsSignatures.id, input.signatureId))),
    db
      .select({ name: smsTemplates.name, type: smsTemplates.type, content: smsTemplates.content })
      .from(smsTemplates)
      .where(and(eq(smsTemplates.projectId, input.projectId), eq(smsTemplates.id, input.templateId))),
    smsSendingSettings(db, input.projectId),
  ]);
  const [row] = await db
    .insert(smsMessages)
    .values({
      id: randomUUID(),
      projectId: input.projectId,
      phone: normalizeMobile(input.phone.trim()).slice(0, 20),
      signatureId: signature ? input.signatureId : null,
      signatureName: signature?.name ?? '',
      templateId: template ? input.templateId : null,
      templateName: template?.name ?? '（模板已删除）',
      templateType: template?.type ?? 'notification',
      content: template?.content ?? '',
      parts: 0,
      provider: settings.provider,
      ...initialState('notification', now, input.reason),
      ...originOf(input),
      createdAt: now,
    })
    .returning();
  return toSmsMessage(row!);
}

export const FREE_TEXT_LABELS: Record<'assistant' | 'flow', string> = {
  assistant: '助手请求（自由文本）',
  flow: '通话流程短信（自由文本）',
};

/**
 * An SMS an assistant or a flow asked for in its own words, with no template to send it under:
 * recorded either way, so the request is never lost; sent only by the development outbox, since a
 * Chinese carrier only takes approved templates (the record says what to configure instead).
 */
export async function enqueueFreeText(
  db: Database,
  input: {
    projectId: string;
    phone: string;
    content: string;
    source: 'assistant' | 'flow';
    callId?: string | null;
    taskId?: string | null;
  },
  now = new Date(),
): Promise<SmsMessage> {
  const phone = normalizeMobile(input.phone.trim());
  const settings = await smsSendingSettings(db, input.projectId);
  const content = input.content.trim().slice(0, 500);
  let reason: string | undefined;
  if (!MAINLAND_MOBILE.test(phone)) reason = '对方号码不是中国大陆手机号，无法发送短信';
  else if (settings.provider !== 'outbox') {
    reason =
      input.source === 'assistant'
        ? '运营商只接收已审核的模板短信：请在助手或任务的「跟进短信」中添加「助手请求发送」规则，选择签名和模板'
        : '运营商只接收已审核的模板短信：流程的发送短信节点是自由文本，仅开发发件箱可发送';
  } else {
    const blocks = await smsBlockReasons(db, input.projectId, [phone], 'notification', now, {
      dailyCap: settings.dailyCap,
    });
    reason = blocks.get(phone);
  }
  const [row] = await db
    .insert(smsMessages)
    .values({
      id: randomUUID(),
      projectId: input.projectId,
      phone: phone || input.phone.slice(0, 20),
      signatureName: '',
      templateName: FREE_TEXT_LABELS[input.source],
      templateType: 'notification',
      content,
      parts: Math.max(1, smsParts(content).length),
      provider: settings.provider,
      ...initialState('notification', now, reason),
      source: input.source,
      callId: input.callId ?? null,
      taskId: input.taskId ?? null,
      createdAt: now,
    })
    .returning();
  return toSmsMessage(row!);
}

// ---------------------------------------------------------------- do-not-disturb

const toOptOut = (row: typeof smsOptOuts.$inferSelect): SmsOptOut => ({
  phone: row.phone,
  source: row.source,
  reply: row.reply,
  createdAt: row.createdAt.toISOString(),
});

/** Puts a number on the SMS do-not-disturb list; already there, it stays as it was. */
export async function recordOptOut(
  db: Database,
  projectId: string,
  phone: string,
  source: 'reply' | 'manual' | 'api',
  reply = '',
  now = new Date(),
): Promise<SmsOptOut> {
  await db
    .insert(smsOptOuts)
    .values({ projectId, phone, source, reply: reply.slice(0, 200), createdAt: now })
    .onConflictDoNothing();
  const [row] = await db
    .select()
    .from(smsOptOuts)
    .where(and(eq(smsOptOuts.projectId, projectId), eq(smsOptOuts.phone, phone)));
  return toOptOut(row!);
}

export async function listOptOuts(
  db: Database,
  projectId: string,
  query: { page: number; pageSize: number; phone?: string },
) {
  const digits = query.phone?.replace(/\D/g, '');
  const where = and(
    eq(smsOptOuts.projectId, projectId),
    digits ? like(smsOptOuts.phone, `%${digits}%`) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(smsOptOuts)
      .where(where)
      .orderBy(desc(smsOptOuts.createdAt), smsOptOuts.phone)
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ n: count() }).from(smsOptOuts).where(where),
  ]);
  return {
    items: rows.map(toOptOut),
    total: Number(total?.n ?? 0),
    page: query.page,
    pageSize: query.pageSize,
  };
}

export async function removeOptOut(db: Database, projectId: string, phone: string): Promise<void> {
  const removed = await db
    .delete(smsOptOuts)
    .where(and(eq(smsOptOuts.projectId, projectId), eq(smsOptOuts.phone, normalizeMobile(phone))))
    .returning({ phone: smsOptOuts.phone });
  if (removed.length === 0) throw notFound('该号码不在短信免打扰名单中');
}

/** A record of this project, for the routes that act on one. */
export async function findSmsMessage(db: Database, projectId: string, id: string) {
  const [row] = await db
    .select()
    .from(smsMessages)
    .where(and(eq(smsMessages.projectId, projectId), eq(smsMessages.id, id)));
  if (!row) throw notFound('短信记录不存在');
  return row;
}
