import {
  normalizeMobile,
  SMS_LIST_TOTAL_CAP,
  type SmsCounts,
  type SmsMessage,
  type SmsMessageFilters,
  type SmsMessageList,
  type SmsMessageListQuery,
  type SmsStatistics,
  type SmsStatisticsQuery,
} from '@callpilot/contracts';
import { and, desc, eq, gte, like, lt, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { smsMessages } from '../../db/schema';
import { badRequest, notFound } from '../../lib/errors';
import { rowsOf } from '../calls/calls.service';
import { chinaDay, chinaDayStart, DAY_MS } from '../reports/rollup-range';
import { type SmsMessageRow, toSmsMessage } from './sms-message-view';

/** `%` and `_` typed into a number are literal, not LIKE wildcards. */
const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The first digit string after `prefix` in order ('138' → '139', '1399' → '14'); null when every
 * digit is 9. Digit strings sort the same under every collation, so `phone >= p and phone < next`
 * is the prefix match the (project_id, phone, created_at) index can serve, which LIKE under a
 * non-C collation cannot.
 */
export function nextDigitPrefix(prefix: string): string | null {
  const digits = prefix.replace(/9+$/, '');
  if (digits === '') return null;
  return digits.slice(0, -1) + String(Number(digits.at(-1)) + 1);
}

/**
 * The phone filter: 11 digits match the number exactly, fewer its beginning (号段 or the first
 * digits someone remembers). The call list matches anywhere in the number; over a million SMS
 * that is a full scan on every page, so here only what the phone index can answer.
 */
function phoneWhere(input: string): SQL {
  const digits = normalizeMobile(input);
  if (!/^\d+$/.test(digits)) throw badRequest('字段 phone：手机号只能包含数字');
  if (digits.length > 11) throw badRequest('字段 phone：手机号不能超过 11 位');
  if (digits.length === 11) return eq(smsMessages.phone, digits);
  const next = nextDigitPrefix(digits);
  return and(
    gte(smsMessages.phone, digits),
    next ? lt(smsMessages.phone, next) : undefined,
    like(smsMessages.phone, `${likeLiteral(digits)}%`),
  ) as SQL;
}

/** The WHERE of the list and the export: one definition, so the file holds what the list shows. */
export function smsMessageWhere(projectId: string, f: Partial<SmsMessageFilters>): SQL {
  const where: (SQL | undefined)[] = [eq(smsMessages.projectId, projectId)];
  if (f.from) where.push(gte(smsMessages.createdAt, new Date(f.from)));
  if (f.to) where.push(lte(smsMessages.createdAt, new Date(f.to)));
  if (f.phone) where.push(phoneWhere(f.phone));
  if (f.templateId) where.push(eq(smsMessages.templateId, f.templateId));
  if (f.status) where.push(eq(smsMessages.status, f.status));
  if (f.source) where.push(eq(smsMessages.source, f.source));
  if (f.taskId) where.push(eq(smsMessages.taskId, f.taskId));
  if (f.callId) where.push(eq(smsMessages.callId, f.callId));
  if (f.batchId) where.push(eq(smsMessages.batchId, f.batchId));
  return and(...where) as SQL;
}

/** Newest first, the id breaking ties so pages never repeat or skip a record. */
const newestFirst = [desc(smsMessages.createdAt), desc(smsMessages.id)];

export async function listSmsMessages(
  db: Database,
  projectId: string,
  query: SmsMessageListQuery,
): Promise<SmsMessageList> {
  const where = smsMessageWhere(projectId, query);
  const [rows, counted] = await Promise.all([
    db
      .select()
      .from(smsMessages)
      .where(where)
      .orderBy(...newestFirst)
      .limit(query.pageSize)
      .offset((query.page - 1) * query.pageSize),
    // Counting stops one past the cap: a project's whole history is never read to print a number.
    db.execute<{ n: number }>(
      sql`select count(*)::int as n from (select 1 from ${smsMessages} where ${where} limit ${SMS_LIST_TOTAL_CAP + 1}) capped`,
    ),
  ]);
  const n = Number(rowsOf<{ n: number }>(counted)[0]?.n ?? 0);
  return {
    items: rows.map(toSmsMessage),
    total: Math.min(n, SMS_LIST_TOTAL_CAP),
    totalCapped: n > SMS_LIST_TOTAL_CAP,
    page: query.page,
    pageSize: query.pageSize,
  };
}

export async function getSmsMessage(db: Database, projectId: string, messageId: string): Promise<SmsMessage> {
  const [row] = await db
    .select()
    .from(smsMessages)
    .where(and(eq(smsMessages.projectId, projectId), eq(smsMessages.id, messageId)))
    .limit(1);
  if (!row) throw notFound('短信记录不存在');
  return toSmsMessage(row);
}

/**
 * Every record of `where` (smsMessageWhere), newest first, a batch at a time (keyset, never OFFSET).
 * The caller builds the WHERE before streaming, so a bad filter is a 400, not a broken download.
 */
export async function* iterateSmsMessages(
  db: Database,
  where: SQL,
  batchSize = 1000,
): AsyncGenerator<SmsMessageRow[]> {
  let key: { at: Date; id: string } | null = null;
  for (;;) {
    const after: SQL | undefined = key
      ? (and(
          // A plain bound the index can start from, then the tie-break on the id.
          lte(smsMessages.createdAt, key.at),
          or(
            lt(smsMessages.createdAt, key.at),
            and(eq(smsMessages.createdAt, key.at), lt(smsMessages.id, key.id)),
          ),
        ) as SQL)
      : undefined;
    const rows = await db
      .select()
      .from(smsMessages)
      .where(after ? and(where, after) : where)
      .orderBy(...newestFirst)
      .limit(batchSize);
    if (rows.length === 0) return;
    yield rows;
    if (rows.length < batchSize) return;
    const last = rows[rows.length - 1] as SmsMessageRow;
    key = { at: last.createdAt, id: last.id };
  }
}

// --- 数据统计 --------------------------------------------------------------------------------------

const zero = (): SmsCounts => ({ sent: 0, delivered: 0, failed: 0, pending: 0, blocked: 0, parts: 0 });

/** The counting rules of the contract (SmsCounts), as SQL aggregates over sms_messages. */
const countColumns = sql`
  count(*) filter (where ${smsMessages.status} in ('submitted', 'accepted', 'delivered', 'failed'))::int as sent,
  count(*) filter (where ${smsMessages.status} = 'delivered')::int as delivered,
  count(*) filter (where ${smsMessages.status} = 'failed')::int as failed,
  count(*) filter (where ${smsMessages.status} in ('submitted', 'accepted'))::int as pending,
  count(*) filter (where ${smsMessages.status} = 'blocked')::int as blocked,
  coalesce(sum(${smsMessages.parts}) filter (
    where ${smsMessages.status} in ('submitted', 'accepted', 'delivered', 'failed')), 0)::int as parts`;

type CountRow = {
  sent: number;
  delivered: number;
  failed: number;
  pending: number;
  blocked: number;
  parts: number;
};
const counts = (r: CountRow): SmsCounts => ({
  sent: Number(r.sent),
  delivered: Number(r.delivered),
  failed: Number(r.failed),
  pending: Number(r.pending),
  blocked: Number(r.blocked),
  parts: Number(r.parts),
});
const add = (a: SmsCounts, b: SmsCounts): SmsCounts => ({
  sent: a.sent + b.sent,
  delivered: a.delivered + b.delivered,
  failed: a.failed + b.failed,
  pending: a.pending + b.pending,
  blocked: a.blocked + b.blocked,
  parts: a.parts + b.parts,
});

/** The China day of a record, as SQL (UTC+8 with no daylight saving, so a fixed offset is exact). */
const chinaDaySql = sql`to_char((${smsMessages.createdAt} at time zone 'UTC') + interval '8 hours', 'YYYY-MM-DD')`;

export async function smsStatistics(
  db: Database,
  projectId: string,
  query: SmsStatisticsQuery,
): Promise<SmsStatistics> {
  const start = chinaDayStart(query.from);
  const end = new Date(chinaDayStart(query.to).getTime() + DAY_MS);
  const where = and(
    eq(smsMessages.projectId, projectId),
    gte(smsMessages.createdAt, start),
    lt(smsMessages.createdAt, end),
    query.templateId ? eq(smsMessages.templateId, query.templateId) : undefined,
  ) as SQL;

  const [dayRows, templateRows, reasonRows] = await Promise.all([
    db.execute(sql`select ${chinaDaySql} as day, ${countColumns}
      from ${smsMessages} where ${where} group by 1`),
    db.execute(sql`select ${smsMessages.templateId} as template_id, max(${smsMessages.templateName}) as template_name,
      ${countColumns}
      from ${smsMessages} where ${where}
      group by ${smsMessages.templateId},
        -- Free text has no template: each label is its own row rather than one lump.
        case when ${smsMessages.templateId} is null then ${smsMessages.templateName} end
      order by sent desc, blocked desc, template_name`),
    db.execute(sql`select coalesce(${smsMessages.errorCode}, '') as code,
      coalesce(${smsMessages.errorMessage}, '') as message, count(*)::int as count
      from ${smsMessages} where ${where} and ${smsMessages.status} = 'failed'
      group by 1, 2 order by count desc, code limit 10`),
  ]);

  const byDayMap = new Map(rowsOf<CountRow & { day: string }>(dayRows).map((r) => [r.day, counts(r)]));
  const byDay: SmsStatistics['byDay'] = [];
  for (let at = start.getTime(); at < end.getTime(); at += DAY_MS) {
    const day = chinaDay(new Date(at));
    byDay.push({ day, ...(byDayMap.get(day) ?? zero()) });
  }
  return {
    totals: byDay.reduce<SmsCounts>((sum, { day: _day, ...c }) => add(sum, c), zero()),
    byDay,
    byTemplate: rowsOf<CountRow & { template_id: string | null; template_name: string }>(templateRows).map(
      (r) => ({ templateId: r.template_id, templateName: r.template_name, ...counts(r) }),
    ),
    failureReasons: rowsOf<{ code: string; message: string; count: number }>(reasonRows).map((r) => ({
      code: r.code,
      message: r.message,
      count: Number(r.count),
    })),
  };
}
