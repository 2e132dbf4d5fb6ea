import {
  type DoNotCallEntry,
  normalizeMainlandPhone,
  type Paged,
  type PageQuery,
} from '@callpilot/contracts';
import { and, count, desc, eq, like } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { doNotCall } from '../../db/schema';
import type { DoNotCallList } from '../../engine/call/ports';
import { notFound } from '../../lib/errors';

export type DoNotCallSource = DoNotCallEntry['source'];
/**
 * Who put a number on the list, for the `contact.opted_out` webhook: a call's opt-out, the
 * console, or the open API. Not stored (the table's `source` says how, not through what).
 */
export type DoNotCallChannel = 'call' | 'console' | 'api';

/**
 * The engine may hand us a number in any shape the carrier used; when it is not a mainland
 * number we still keep its digits, because refusing to record an opt-out would be worse.
 */
const storedForm = (phone: string) => normalizeMainlandPhone(phone) ?? phone.replace(/[^\d+]/g, '');

const toEntry = (row: typeof doNotCall.$inferSelect): DoNotCallEntry => ({
  phone: row.phone,
  reason: row.reason,
  source: row.source,
  createdAt: row.createdAt.toISOString(),
});

/** Puts a number on the project's list; a number already there keeps its first reason and source. */
export async function addToDoNotCall(
  db: Database,
  projectId: string,
  phone: string,
  source: DoNotCallSource,
  reason: string,
  _channel: DoNotCallChannel = source === 'opt_out' ? 'call' : 'console',
): Promise<DoNotCallEntry> {
  const stored = storedForm(phone);
  await db
    .insert(doNotCall)
    .values({ projectId, phone: stored, source, reason: reason.slice(0, 200) })
    .onConflictDoNothing();
  const [row] = await db
    .select()
    .from(doNotCall)
    .where(and(eq(doNotCall.projectId, projectId), eq(doNotCall.phone, stored)));
  return toEntry(row!);
}

/** For the dialer and the inbound leg: whether this project must not call the number. */
export async function isOnDoNotCall(db: Database, projectId: string, phone: string): Promise<boolean> {
  const [row] = await db
    .select({ phone: doNotCall.phone })
    .from(doNotCall)
    .where(and(eq(doNotCall.projectId, projectId), eq(doNotCall.phone, storedForm(phone))))
    .limit(1);
  return row !== undefined;
}

export async function listDoNotCall(
  db: Database,
  projectId: string,
  query: PageQuery & { phone?: string },
): Promise<Paged<DoNotCallEntry>> {
  const digits = (query.phone ?? '').replace(/\D/g, '');
  const where = and(
    eq(doNotCall.projectId, projectId),
    digits ? like(doNotCall.phone, `%${digits}%`) : undefined,
  );
  const [total] = await db.select({ n: count() }).from(doNotCall).where(where);
  const rows = await db
    .select()
    .from(doNotCall)
    .where(where)
    .orderBy(desc(doNotCall.createdAt), desc(doNotCall.phone))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return { items: rows.map(toEntry), total: total?.n ?? 0, page: query.page, pageSize: query.pageSize };
}

export async function removeFromDoNotCall(db: Database, projectId: string, phone: string): Promise<void> {
  const removed = await db
    .delete(doNotCall)
    .where(and(eq(doNotCall.projectId, projectId), eq(doNotCall.phone, storedForm(phone))))
    .returning({ phone: doNotCall.phone });
  if (removed.length === 0) throw notFound('该号码不在免打扰名单中');
}

/** The engine's view of the do-not-call list (see engine/call/ports.ts): opt-outs heard in calls. */
export const doNotCallList = (db: Database): DoNotCallList => ({
  optOut: async (projectId, phone, reason) => {
    await addToDoNotCall(db, projectId, phone, 'opt_out', reason);
  },
});
