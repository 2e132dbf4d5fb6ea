import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  SMS_BATCH_REJECT_LABELS,
  type SmsBatch,
  type SmsBatchList,
  type SmsBatchMapping,
  type SmsBatchPreview,
  type SmsBatchReject,
  type SmsBatchRejectKind,
  smsTemplateVariables,
} from '@callpilot/contracts';
import { and, count, desc, eq, inArray, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { smsBatches, smsMessages, smsSignatures, smsTemplates } from '../../db/schema';
import { badRequest, conflict, notFound } from '../../lib/errors';
import { normalizePhone } from '../../lib/phone';
import type { DownloadFile } from '../../lib/reply';
import { CSV_CONTENT_TYPE, csvFile } from '../../lib/spreadsheet';
import type { ContactSheet } from '../tasks/import-parse';
import { contactIds, textColumn } from '../tasks/import-staging';
import { composeSms, marketingSendAfter } from './sms-compose';
import {
  approvedSignatureAndTemplate,
  BLOCK_REASONS,
  initialState,
  smsBlockReasons,
  smsSendingSettings,
} from './sms-send.service';

/**
 * 批量发送. An upload is parsed once and staged as gzipped JSON under DATA_DIR/sms-batches (no table
 * holds it: it lives only between preview and commit, at most a day); the commit applies to every
 * row the rules a single send keeps (sms-compose.ts) and inserts the accepted ones in bulk. The
 * sending worker (sms-sender.ts) sends them; nothing here talks to a provider.
 */

const SAMPLE_ROWS = 10;
const SAMPLE_TEXTS = 5;
const INSERT_BATCH = 5_000;
/** Staged uploads not committed within a day are dropped. */
const STAGED_TTL_MS = 24 * 3_600_000;
const UPLOAD_ID = /^[0-9a-f-]{36}$/;

type Staged = {
  projectId: string;
  signatureId: string;
  templateId: string;
  fileName: string;
  headers: string[];
  rows: [number, string[]][];
  mapping: SmsBatchMapping;
};

type Approved = {
  signature: typeof smsSignatures.$inferSelect;
  template: typeof smsTemplates.$inferSelect;
  variables: string[];
};

type Accepted = {
  n: number;
  phone: string;
  variables: Record<string, string>;
  content: string;
  parts: number;
};
type Reject = { n: number; kind: SmsBatchRejectKind; phone: string; reason: string };

const stagingDir = (dataDir: string) => path.join(dataDir, 'sms-batches');
function stagedPath(dataDir: string, uploadId: string) {
  // The id comes from the URL: only our own UUIDs may name a file.
  if (!UPLOAD_ID.test(uploadId)) throw notFound('上传记录不存在或已过期，请重新上传文件');
  return path.join(stagingDir(dataDir), `${uploadId}.json.gz`);
}

async function readStaged(dataDir: string, projectId: string, uploadId: string): Promise<Staged> {
  let bytes: Buffer;
  try {
    bytes = await readFile(stagedPath(dataDir, uploadId));
  } catch {
    throw notFound('上传记录不存在或已过期，请重新上传文件');
  }
  const staged = JSON.parse(gunzipSync(bytes).toString('utf8')) as Staged;
  if (staged.projectId !== projectId) throw notFound('上传记录不存在或已过期，请重新上传文件');
  return staged;
}

const writeStaged = (file: string, staged: Staged) =>
  writeFile(file, gzipSync(JSON.stringify(staged), { level: 1 }));

/**
 * Drops uploads older than a day that were never committed; a failure here never fails an upload.
 * Files age on the wall clock (their mtime), whatever clock the sends are decided on.
 */
async function sweepStaged(dataDir: string, now = Date.now()) {
  const dir = stagingDir(dataDir);
  const names = await readdir(dir).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name);
      const info = await stat(file).catch(() => null);
      if (info && now - info.mtimeMs > STAGED_TTL_MS) await rm(file, { force: true });
    }),
  );
}

/** The signature and the template, both 已通过 (the single send's own check), and the variables. */
async function loadApproved(
  db: Database,
  projectId: string,
  signatureId: string,
  templateId: string,
): Promise<Approved> {
  const { signature, template } = await approvedSignatureAndTemplate(db, projectId, signatureId, templateId);
  const variables = [...new Set(smsTemplateVariables(template.content).map((v) => v.name))];
  return { signature, template, variables };
}

/** Common English variable names and the Chinese headers people give the same column. */
const VARIABLE_HEADERS: Record<string, string[]> = {
  name: ['姓名', '名字', '客户姓名', '称呼'],
  code: ['验证码', '代码'],
  amount: ['金额'],
  date: ['日期'],
  time: ['时间'],
  product: ['产品', '商品'],
  order: ['订单号', '订单'],
  phone: ['电话', '联系电话'],
  address: ['地址'],
  company: ['公司', '公司名称'],
};
const PHONE_HEADERS = /^(手机|手机号|手机号码|号码|电话|电话号码|联系电话|phone|mobile|tel)$/;
const simplify = (header: string) =>
  header
    .trim()
    .toLowerCase()
    .replace(/[\s_]+/g, ' ');

/** The phone column and a column per variable, guessed from the headers (content for the phone). */
export function guessBatchMapping(headers: string[], rows: [number, string[]][], variables: string[]) {
  const simple = headers.map(simplify);
  let phone = simple.findIndex((h) => PHONE_HEADERS.test(h));
  if (phone < 0) phone = simple.findIndex((h) => /手机|电话|号码|phone|mobile/.test(h));
  if (phone < 0) {
    const sample = rows.slice(0, 50);
    let best = 0;
    headers.forEach((_, i) => {
      const hits = sample.filter(([, cells]) => normalizePhone(cells[i]).ok).length;
      if (hits > best && hits * 2 >= sample.length) {
        best = hits;
        phone = i;
      }
    });
  }
  const mapped: Record<string, string> = {};
  for (const name of variables) {
    const candidates = [simplify(name), ...(VARIABLE_HEADERS[simplify(name)] ?? [])];
    const i = simple.findIndex((h, k) => k !== phone && candidates.includes(h));
    mapped[name] = i >= 0 ? headers[i]! : '';
  }
  return { phone: phone >= 0 ? headers[phone]! : '', variables: mapped };
}

/**
 * Sorts the rows: invalid number (or not a mobile), duplicate of an earlier row, a variable missing
 * or too long (composeSms's rule), on the do-not-disturb list (SMS opt-outs or do-not-call), over the
 * project's daily cap for the number, or accepted with its text and parts.
 */
async function classify(
  db: Database,
  projectId: string,
  staged: Staged,
  mapping: SmsBatchMapping,
  approved: Approved,
  now: Date,
): Promise<{ accepted: Accepted[]; rejects: Reject[] }> {
  const column = (field: string, header: string) => {
    const i = staged.headers.indexOf(header);
    if (i < 0) throw badRequest(`字段 ${field}：文件中没有“${header}”列`);
    return i;
  };
  if (!mapping.phone) throw badRequest('字段 mapping.phone：请选择手机号列');
  const phoneAt = column('mapping.phone', mapping.phone);
  for (const key of Object.keys(mapping.variables)) {
    if (!approved.variables.includes(key)) throw badRequest(`字段 mapping.variables：模板没有变量“${key}”`);
  }
  const variableAt = approved.variables.map((name) => {
    const header = mapping.variables[name] ?? '';
    return { name, index: header ? column(`mapping.variables.${name}`, header) : -1 };
  });

  const rejects: Reject[] = [];
  const candidates: Accepted[] = [];
  const firstRow = new Map<string, number>();
  for (const [n, cells] of staged.rows) {
    const raw = (cells[phoneAt] ?? '').trim();
    const normalized = normalizePhone(raw);
    if (!normalized.ok) {
      rejects.push({ n, kind: 'invalid', phone: raw, reason: normalized.reason });
      continue;
    }
    if (normalized.kind !== 'mobile') {
      rejects.push({ n, kind: 'invalid', phone: raw, reason: '不是手机号，无法接收短信' });
      continue;
    }
    const earlier = firstRow.get(normalized.phone);
    if (earlier !== undefined) {
      rejects.push({ n, kind: 'duplicate', phone: normalized.phone, reason: `与第 ${earlier} 行号码重复` });
      continue;
    }
    firstRow.set(normalized.phone, n);
    const values: Record<string, string> = {};
    for (const { name, index } of variableAt) values[name] = index >= 0 ? (cells[index] ?? '').trim() : '';
    const composed = composeSms(approved.signature.name, approved.template.content, values);
    if (!composed.ok) {
      rejects.push({ n, kind: 'variable', phone: normalized.phone, reason: composed.message });
      continue;
    }
    candidates.push({ n, phone: normalized.phone, variables: values, ...composed });
  }

  // The single send's own rules (do-not-disturb lists, except for 验证码; the daily cap) over all
  // numbers at once. Duplicates are already refused, so no row counts towards another's cap.
  const { dailyCap } = await smsSendingSettings(db, projectId);
  const blocked = await smsBlockReasons(
    db,
    projectId,
    candidates.map((c) => c.phone),
    approved.template.type,
    now,
    { dailyCap },
  );
  const overCap = dailyCap > 0 ? BLOCK_REASONS.dailyCap(dailyCap) : null;
  const accepted: Accepted[] = [];
  for (const c of candidates) {
    const reason = blocked.get(c.phone);
    if (reason)
      rejects.push({ n: c.n, kind: reason === overCap ? 'over_cap' : 'opted_out', phone: c.phone, reason });
    else accepted.push(c);
  }
  rejects.sort((a, b) => a.n - b.n);
  return { accepted, rejects };
}

function previewOf(
  uploadId: string,
  staged: Staged,
  approved: Approved,
  result: { accepted: Accepted[]; rejects: Reject[] },
  now: Date,
): SmsBatchPreview {
  const counts = Object.fromEntries(Object.keys(SMS_BATCH_REJECT_LABELS).map((kind) => [kind, 0])) as Record<
    SmsBatchRejectKind,
    number
  >;
  for (const r of result.rejects) counts[r.kind]++;
  const sendAfter = approved.template.type === 'marketing' ? marketingSendAfter(now) : null;
  return {
    uploadId,
    fileName: staged.fileName,
    signatureId: staged.signatureId,
    templateId: staged.templateId,
    headers: staged.headers,
    variables: approved.variables,
    sample: staged.rows
      .slice(0, SAMPLE_ROWS)
      .map(([, cells]) => Object.fromEntries(staged.headers.map((h, i) => [h, cells[i] ?? '']))),
    mapping: staged.mapping,
    rows: staged.rows.length,
    valid: result.accepted.length,
    counts,
    texts: result.accepted
      .slice(0, SAMPLE_TEXTS)
      .map((a) => ({ row: a.n, phone: a.phone, content: a.content, parts: a.parts })),
    estimatedParts: result.accepted.reduce((sum, a) => sum + a.parts, 0),
    sendAfter: sendAfter?.toISOString() ?? null,
  };
}

export type BatchContext = { db: Database; dataDir: string; now: Date };

/** Stages a parsed upload for a signature and template, and answers its preview with a guessed mapping. */
export async function createBatchUpload(
  { db, dataDir, now }: BatchContext,
  projectId: string,
  ids: { signatureId: string; templateId: string },
  fileName: string,
  sheet: ContactSheet,
): Promise<SmsBatchPreview> {
  const approved = await loadApproved(db, projectId, ids.signatureId, ids.templateId);
  const rows = sheet.rows.map((r): [number, string[]] => [r.n, r.cells]);
  const guessed = guessBatchMapping(sheet.headers, rows, approved.variables);
  if (!guessed.phone) {
    throw badRequest('未找到手机号列：表头须包含“手机号”“号码”或“phone”列（可下载模板参照）');
  }
  const staged: Staged = {
    projectId,
    ...ids,
    fileName: fileName.slice(0, 200),
    headers: sheet.headers,
    rows,
    mapping: guessed,
  };
  const result = await classify(db, projectId, staged, guessed, approved, now);
  await sweepStaged(dataDir);
  await mkdir(stagingDir(dataDir), { recursive: true });
  const uploadId = randomUUID();
  await writeStaged(stagedPath(dataDir, uploadId), staged);
  return previewOf(uploadId, staged, approved, result, now);
}

/** Recounts a staged upload with another mapping, which is kept for the commit. */
export async function previewBatchUpload(
  { db, dataDir, now }: BatchContext,
  projectId: string,
  uploadId: string,
  mapping: SmsBatchMapping,
): Promise<SmsBatchPreview> {
  const staged = await readStaged(dataDir, projectId, uploadId);
  const approved = await loadApproved(db, projectId, staged.signatureId, staged.templateId);
  const result = await classify(db, projectId, staged, mapping, approved, now);
  staged.mapping = mapping;
  await writeStaged(stagedPath(dataDir, uploadId), staged);
  return previewOf(uploadId, staged, approved, result, now);
}

/**
 * Commits a staged upload: one sms_batches row with the refused rows, the accepted rows as SMS
 * records (queued, or waiting until 08:00 for 推广 outside the window), in one transaction. The
 * staged file is claimed by renaming it first, so a second commit of the same upload finds nothing.
 */
export async function commitBatchUpload(
  { db, dataDir, now }: BatchContext,
  projectId: string,
  uploadId: string,
  mapping: SmsBatchMapping,
  createdBy: string | null,
): Promise<SmsBatch> {
  const file = stagedPath(dataDir, uploadId);
  const staged = await readStaged(dataDir, projectId, uploadId);
  const approved = await loadApproved(db, projectId, staged.signatureId, staged.templateId);
  const claimed = `${file}.${randomUUID()}.committing`;
  try {
    await rename(file, claimed);
  } catch {
    throw conflict('该文件已提交发送，请勿重复提交');
  }
  try {
    const id = await db.transaction(async (tx) => {
      const { accepted, rejects } = await classify(tx, projectId, staged, mapping, approved, now);
      const { provider } = await smsSendingSettings(tx, projectId);
      // Every accepted row starts as a single send would at this moment: queued, or waiting until 08:00.
      const { status, sendAfter, timeline } = initialState(approved.template.type, now, undefined);
      const batchId = randomUUID();
      const rejectRows: SmsBatchReject[] = rejects.map((r) => ({
        row: r.n,
        phone: r.phone,
        reason: r.reason,
      }));
      await tx.insert(smsBatches).values({
        id: batchId,
        projectId,
        signatureId: approved.signature.id,
        templateId: approved.template.id,
        fileName: staged.fileName,
        total: staged.rows.length,
        accepted: accepted.length,
        rejected: rejects.length,
        rejects: rejectRows,
        createdBy,
        createdAt: now,
      });
      const ids = contactIds(accepted.length);
      for (let i = 0; i < accepted.length; i += INSERT_BATCH) {
        const part = accepted.slice(i, i + INSERT_BATCH);
        await tx.execute(sql`
          insert into sms_messages (id, project_id, phone, signature_id, signature_name, template_id,
            template_name, template_type, variables, content, parts, provider, status, timeline,
            send_after, source, batch_id, created_by, created_at)
          select substr(r.id, 2), ${projectId}, substr(r.phone, 2), ${approved.signature.id},
            ${approved.signature.name}, ${approved.template.id}, ${approved.template.name},
            ${approved.template.type}, substr(r.variables, 2)::jsonb, substr(r.content, 2),
            substr(r.parts, 2)::int, ${provider}, ${status}, ${JSON.stringify(timeline)}::jsonb,
            ${sendAfter.toISOString()}::timestamptz, 'batch', ${batchId}, ${createdBy},
            ${now.toISOString()}::timestamptz
          from unnest(
            ${textColumn(ids.slice(i, i + INSERT_BATCH))},
            ${textColumn(part.map((a) => a.phone))},
            ${textColumn(part.map((a) => JSON.stringify(a.variables)))},
            ${textColumn(part.map((a) => a.content))},
            ${textColumn(part.map((a) => String(a.parts)))}
          ) as r(id, phone, variables, content, parts)`);
      }
      return batchId;
    });
    await rm(claimed, { force: true });
    const [view] = await batchViews(db, projectId, [id]);
    return view!;
  } catch (err) {
    // Nothing was written: the upload can be committed again (after fixing what was refused).
    await rename(claimed, file).catch(() => undefined);
    throw err;
  }
}

/** Batches with their signature and template names and their records' progress. */
async function batchViews(db: Database, projectId: string, ids: string[]): Promise<SmsBatch[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({
      batch: smsBatches,
      signatureName: smsSignatures.name,
      templateName: smsTemplates.name,
    })
    .from(smsBatches)
    .leftJoin(smsSignatures, eq(smsSignatures.id, smsBatches.signatureId))
    .leftJoin(smsTemplates, eq(smsTemplates.id, smsBatches.templateId))
    .where(and(eq(smsBatches.projectId, projectId), inArray(smsBatches.id, ids)))
    .orderBy(desc(smsBatches.createdAt), desc(smsBatches.id));
  const progress = await db
    .select({
      batchId: smsMessages.batchId,
      waiting: sql<number>`count(*) filter (where ${smsMessages.status} in ('queued', 'waiting'))::int`,
      sent: sql<number>`count(*) filter (where ${smsMessages.status} in ('submitted', 'accepted', 'delivered', 'failed'))::int`,
      delivered: sql<number>`count(*) filter (where ${smsMessages.status} = 'delivered')::int`,
      failed: sql<number>`count(*) filter (where ${smsMessages.status} = 'failed')::int`,
    })
    .from(smsMessages)
    .where(and(eq(smsMessages.projectId, projectId), inArray(smsMessages.batchId, ids)))
    .groupBy(smsMessages.batchId);
  const byBatch = new Map(progress.map((p) => [p.batchId, p]));
  return rows.map(({ batch, signatureName, templateName }) => {
    const p = byBatch.get(batch.id);
    return {
      id: batch.id,
      fileName: batch.fileName,
      signatureId: batch.signatureId,
      signatureName: signatureName ?? '（已删除）',
      templateId: batch.templateId,
      templateName: templateName ?? '（已删除）',
      total: batch.total,
      accepted: batch.accepted,
      rejected: batch.rejected,
      waiting: p?.waiting ?? 0,
      sent: p?.sent ?? 0,
      delivered: p?.delivered ?? 0,
      failed: p?.failed ?? 0,
      createdAt: batch.createdAt.toISOString(),
    };
  });
}

export async function listBatches(
  db: Database,
  projectId: string,
  query: { page: number; pageSize: number },
): Promise<SmsBatchList> {
  const where = eq(smsBatches.projectId, projectId);
  const [[total], page] = await Promise.all([
    db.select({ total: count() }).from(smsBatches).where(where),
    db
      .select({ id: smsBatches.id })
      .from(smsBatches)
      .where(where)
      .orderBy(desc(smsBatches.createdAt), desc(smsBatches.id))
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
  ]);
  return {
    items: await batchViews(
      db,
      projectId,
      page.map((r) => r.id),
    ),
    total: total?.total ?? 0,
    page: query.page,
    pageSize: query.pageSize,
  };
}

/** The refused rows of a batch: 行号, 手机号, 原因. */
export async function batchRejectsCsv(
  db: Database,
  projectId: string,
  batchId: string,
): Promise<DownloadFile> {
  const [batch] = await db
    .select({ fileName: smsBatches.fileName, rejects: smsBatches.rejects })
    .from(smsBatches)
    .where(and(eq(smsBatches.id, batchId), eq(smsBatches.projectId, projectId)))
    .limit(1);
  if (!batch) throw notFound('批量发送记录不存在');
  const rejects = batch.rejects as SmsBatchReject[];
  return {
    fileName: `${batch.fileName.replace(/\.[^.]+$/, '') || '批量发送'}-未通过.csv`,
    contentType: CSV_CONTENT_TYPE,
    body: csvFile(
      ['行号', '手机号', '原因'],
      rejects.map((r) => [r.row, r.phone, r.reason]),
    ),
  };
}

/** A file to fill in: 手机号 and the template's variables as headers. */
export async function batchTemplateCsv(
  db: Database,
  projectId: string,
  templateId: string,
): Promise<DownloadFile> {
  const [template] = await db
    .select({ name: smsTemplates.name, content: smsTemplates.content })
    .from(smsTemplates)
    .where(and(eq(smsTemplates.id, templateId), eq(smsTemplates.projectId, projectId)))
    .limit(1);
  if (!template) throw notFound('模板不存在');
  const variables = [...new Set(smsTemplateVariables(template.content).map((v) => v.name))];
  return {
    fileName: `批量发送模板-${template.name}.csv`,
    contentType: CSV_CONTENT_TYPE,
    body: csvFile(['手机号', ...variables], []),
  };
}
