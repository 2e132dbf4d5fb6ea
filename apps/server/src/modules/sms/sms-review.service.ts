import { randomUUID } from 'node:crypto';
import {
  SMS_PROVIDER_LABELS,
  SMS_REVIEW_STATUS_LABELS,
  type SmsReviewListQuery,
  type SmsReviewStatus,
  type SmsSignature,
  type SmsSignatureWriteRequest,
  type SmsTemplate,
  type SmsTemplateWriteRequest,
} from '@callpilot/contracts';
import { and, count, desc, eq, ilike, inArray } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { smsSettings, smsSignatures, smsTemplates } from '../../db/schema';
import { badRequest, conflict, notFound } from '../../lib/errors';

/**
 * 签名 and 模板 share one review workflow: 待提交 (draft) → 审核中 (reviewing) → 已通过 / 未通过
 * (approved / rejected) → 已撤回 (withdrawn, from reviewing). Only what is not under review and
 * not approved can be edited; an edit goes back to draft. An approved one is never changed (SMS
 * already sent name it); a new one is made instead.
 */
export type SmsReviewKind = 'signature' | 'template';

const KIND_LABEL: Record<SmsReviewKind, string> = { signature: '签名', template: '模板' };
const EDITABLE: SmsReviewStatus[] = ['draft', 'rejected', 'withdrawn'];

export type SignatureRow = typeof smsSignatures.$inferSelect;
export type TemplateRow = typeof smsTemplates.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const reviewFieldsOf = (row: SignatureRow | TemplateRow) => ({
  status: row.status,
  rejectReason: row.rejectReason,
  provider: row.provider,
  submittedAt: iso(row.submittedAt),
  reviewedAt: iso(row.reviewedAt),
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const toSignature = (row: SignatureRow): SmsSignature => ({
  id: row.id,
  name: row.name,
  source: row.source,
  remark: row.remark,
  proofName: row.proofName,
  ...reviewFieldsOf(row),
});

export const toTemplate = (row: TemplateRow): SmsTemplate => ({
  id: row.id,
  name: row.name,
  type: row.type,
  content: row.content,
  variables: row.variables,
  remark: row.remark,
  ...reviewFieldsOf(row),
});

/** ${name} variables in order of first appearance. */
export function templateVariables(content: string): string[] {
  return [...new Set([...content.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1] as string))];
}

const tableOf = (kind: SmsReviewKind) => (kind === 'signature' ? smsSignatures : smsTemplates);

async function findRow(db: Database, kind: SmsReviewKind, projectId: string, id: string) {
  const table = tableOf(kind);
  const [row] = await db
    .select()
    .from(table)
    .where(and(eq(table.projectId, projectId), eq(table.id, id)))
    .limit(1);
  if (!row) throw notFound(`${KIND_LABEL[kind]}不存在`);
  return row;
}

export async function listSignatures(db: Database, projectId: string, query: SmsReviewListQuery) {
  const where = and(
    eq(smsSignatures.projectId, projectId),
    query.status ? eq(smsSignatures.status, query.status) : undefined,
    query.name ? ilike(smsSignatures.name, `%${query.name.replace(/[\\%_]/g, '\\$&')}%`) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(smsSignatures)
      .where(where)
      .orderBy(desc(smsSignatures.createdAt), desc(smsSignatures.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ n: count() }).from(smsSignatures).where(where),
  ]);
  return { items: rows.map(toSignature), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}

export async function listTemplates(db: Database, projectId: string, query: SmsReviewListQuery) {
  const where = and(
    eq(smsTemplates.projectId, projectId),
    query.status ? eq(smsTemplates.status, query.status) : undefined,
    query.name ? ilike(smsTemplates.name, `%${query.name.replace(/[\\%_]/g, '\\$&')}%`) : undefined,
  );
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(smsTemplates)
      .where(where)
      .orderBy(desc(smsTemplates.createdAt), desc(smsTemplates.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    db.select({ n: count() }).from(smsTemplates).where(where),
  ]);
  return { items: rows.map(toTemplate), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}

export async function getSignature(db: Database, projectId: string, id: string) {
  return toSignature((await findRow(db, 'signature', projectId, id)) as SignatureRow);
}

export async function getTemplate(db: Database, projectId: string, id: string) {
  return toTemplate((await findRow(db, 'template', projectId, id)) as TemplateRow);
}

export async function createSignature(
  db: Database,
  projectId: string,
  userId: string | null,
  input: SmsSignatureWriteRequest,
): Promise<SmsSignature> {
  const [row] = await db
    .insert(smsSignatures)
    .values({ id: randomUUID(), projectId, createdBy: userId, ...input })
    .onConflictDoNothing()
    .returning();
  if (!row) throw conflict(`签名【${input.name}】已存在`);
  return toSignature(row);
}

export async function createTemplate(
  db: Database,
  projectId: string,
  userId: string | null,
  input: SmsTemplateWriteRequest,
): Promise<SmsTemplate> {
  const [row] = await db
    .insert(smsTemplates)
    .values({
      id: randomUUID(),
      projectId,
      createdBy: userId,
      ...input,
      variables: templateVariables(input.content),
    })
    .returning();
  return toTemplate(row as TemplateRow);
}

function assertEditable(kind: SmsReviewKind, status: SmsReviewStatus) {
  if (status === 'reviewing') throw conflict(`${KIND_LABEL[kind]}审核中，不能修改；请先撤回`);
  if (status === 'approved') throw conflict(`${KIND_LABEL[kind]}已通过审核，不能修改；如需变更请新建`);
}

export async function updateSignature(
  db: Database,
  projectId: string,
  id: string,
  input: SmsSignatureWriteRequest,
  now: number,
): Promise<SmsSignature> {
  const current = (await findRow(db, 'signature', projectId, id)) as SignatureRow;
  assertEditable('signature', current.status);
  const [clash] = await db
    .select({ id: smsSignatures.id })
    .from(smsSignatures)
    .where(and(eq(smsSignatures.projectId, projectId), eq(smsSignatures.name, input.name)))
    .limit(1);
  if (clash && clash.id !== id) throw conflict(`签名【${input.name}】已存在`);
  const [row] = await db
    .update(smsSignatures)
    .set({ ...input, status: 'draft', rejectReason: null, updatedAt: new Date(now) })
    .where(eq(smsSignatures.id, id))
    .returning();
  return toSignature(row as SignatureRow);
}

export async function updateTemplate(
  db: Database,
  projectId: string,
  id: string,
  input: SmsTemplateWriteRequest,
  now: number,
): Promise<SmsTemplate> {
  const current = (await findRow(db, 'template', projectId, id)) as TemplateRow;
  assertEditable('template', current.status);
  const [row] = await db
    .update(smsTemplates)
    .set({
      ...input,
      variables: templateVariables(input.content),
      status: 'draft',
      rejectReason: null,
      updatedAt: new Date(now),
    })
    .where(eq(smsTemplates.id, id))
    .returning();
  return toTemplate(row as TemplateRow);
}

/** Records the proof file (kept by the caller under DATA_DIR); only while editable. */
export async function setSignatureProof(
  db: Database,
  projectId: string,
  id: string,
  proof: { path: string; name: string },
  now: number,
): Promise<SmsSignature> {
  const current = (await findRow(db, 'signature', projectId, id)) as SignatureRow;
  assertEditable('signature', current.status);
  const [row] = await db
    .update(smsSignatures)
    .set({ proofPath: proof.path, proofName: proof.name, status: 'draft', updatedAt: new Date(now) })
    .where(eq(smsSignatures.id, id))
    .returning();
  return toSignature(row as SignatureRow);
}

/**
 * A cloud provider's submission of one row: the caller builds it (it holds the provider clients and
 * the proof files) and it throws an AppError the console can show when the vendor refuses.
 */
export type CloudReviewSubmit = (
  provider: 'aliyun' | 'tencent',
  row: SignatureRow | TemplateRow,
) => Promise<{ providerRef: string }>;

/**
 * 提交审核. `check` refuses what a reviewer would (the template linter; a signature without its
 * proof) before anything changes. With the development outbox a platform operator reviews
 * (`npm run admin -- sms:review`); with a cloud provider `cloud` submits it to the vendor first,
 * so a refusal there changes nothing here, and the vendor's reference is kept for the review
 * poller (sms-review-poller.ts).
 */
export async function submitForReview(
  db: Database,
  kind: SmsReviewKind,
  projectId: string,
  id: string,
  now: number,
  check: (row: SignatureRow | TemplateRow) => void,
  cloud?: CloudReviewSubmit,
) {
  const table = tableOf(kind);
  const current = await findRow(db, kind, projectId, id);
  if (current.status === 'reviewing') throw conflict(`${KIND_LABEL[kind]}已在审核中`);
  if (current.status === 'approved') throw conflict(`${KIND_LABEL[kind]}已通过审核`);
  check(current);
  const [settings] = await db
    .select({ provider: smsSettings.provider })
    .from(smsSettings)
    .where(eq(smsSettings.projectId, projectId))
    .limit(1);
  const provider = settings?.provider ?? 'outbox';
  let providerRef: string | null = null;
  if (provider !== 'outbox') {
    if (!cloud)
      throw conflict(
        `向${SMS_PROVIDER_LABELS[provider]}提交审核尚未接入：请暂用开发发件箱，由平台管理员审核（npm run admin -- sms:review）`,
      );
    providerRef = (await cloud(provider, current)).providerRef;
  }
  const [row] = await db
    .update(table)
    .set({
      status: 'reviewing',
      rejectReason: null,
      provider,
      providerRef,
      submittedAt: new Date(now),
      reviewedAt: null,
      updatedAt: new Date(now),
    })
    .where(and(eq(table.id, id), inArray(table.status, EDITABLE)))
    .returning();
  if (!row) throw conflict(`${KIND_LABEL[kind]}状态已变化，请刷新后重试`);
  return row;
}

/** Why a cloud provider's review cannot be withdrawn from here. */
const CLOUD_WITHDRAW: Record<'aliyun' | 'tencent', string> = {
  aliyun: '阿里云未提供撤回审核的接口：请在阿里云短信控制台取消审核，平台会在下次同步审核结果时更新状态',
  tencent:
    '腾讯云未提供撤回审核的接口：请等待审核结果，或在腾讯云短信控制台删除后，平台会在下次同步时更新状态',
};

/** 撤回: back out of review; it can be edited and submitted again. */
export async function withdrawFromReview(
  db: Database,
  kind: SmsReviewKind,
  projectId: string,
  id: string,
  now: number,
) {
  const table = tableOf(kind);
  const current = await findRow(db, kind, projectId, id);
  if (current.status === 'reviewing' && (current.provider === 'aliyun' || current.provider === 'tencent'))
    throw conflict(CLOUD_WITHDRAW[current.provider]);
  const [row] = await db
    .update(table)
    .set({ status: 'withdrawn', updatedAt: new Date(now) })
    .where(and(eq(table.id, id), eq(table.status, 'reviewing')))
    .returning();
  if (!row) throw conflict(`只有审核中的${KIND_LABEL[kind]}可以撤回`);
  return row;
}

/**
 * The reviewer's decision (the admin CLI for the outbox; a provider's answer otherwise): only what
 * is under review is decided, and a refusal carries its reason.
 */
export async function decideReview(
  db: Database,
  kind: SmsReviewKind,
  id: string,
  decision: { approve: true } | { approve: false; reason: string },
  now: number,
) {
  const table = tableOf(kind);
  if (!decision.approve && !decision.reason.trim()) throw badRequest('驳回时须填写原因');
  const [row] = await db
    .update(table)
    .set({
      status: decision.approve ? 'approved' : 'rejected',
      rejectReason: decision.approve ? null : decision.reason.trim(),
      reviewedAt: new Date(now),
      updatedAt: new Date(now),
    })
    .where(and(eq(table.id, id), eq(table.status, 'reviewing')))
    .returning();
  if (!row) {
    const [exists] = await db.select({ status: table.status }).from(table).where(eq(table.id, id)).limit(1);
    if (!exists) throw notFound(`${KIND_LABEL[kind]}不存在`);
    throw conflict(`${KIND_LABEL[kind]}不在审核中（当前：${SMS_REVIEW_STATUS_LABELS[exists.status]}）`);
  }
  return row;
}

export async function deleteReviewed(db: Database, kind: SmsReviewKind, projectId: string, id: string) {
  const table = tableOf(kind);
  await findRow(db, kind, projectId, id);
  await db.delete(table).where(and(eq(table.projectId, projectId), eq(table.id, id)));
}
