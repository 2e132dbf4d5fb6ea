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
import { type OptOutOrigin, publishOptOut } from '../webhooks/event-sources';

export type DoNotCallSource = DoNotCallEntry['source'];
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

/** How the list's sources read in a `contact.opted_out` event when the caller names none. */
const ORIGIN_OF: Record<DoNotCallSource, OptOutOrigin['source']> = {
  opt_out: 'call',
  manual: 'console',
  import: 'console',
};

/**
 * Puts a number on the project's list; a number already there keeps its first reason and source.
 * A number newly on it is a `contact.opted_out` webhook event: `origin` says where it came from
 * (the open API passes `{ source: 'api' }`; a call's opt-out its call id).
 */
export async function addToDoNotCall(
  db: Database,
  projectId: string,
  phone: string,
  source: DoNotCallSource,
  reason: string,
  origin?: OptOutOrigin,
): Promise<DoNotCallEntry> {
  const stored = storedForm(phone);
  const added = await db
    .insert(doNotCall)
    .values({ projectId, phone: stored, source, reason: reason.slice(0, 200) })
    .onConflictDoNothing()
    .returning();
  const [row] = added.length
    ? added
    : await db
        .select()
        .from(doNotCall)
        .where(and(eq(doNotCall.projectId, projectId), eq(doNotCall.phone, stored)));
  if (added[0]) {
    await publishOptOut(
      db,
      projectId,
      { phone: stored, at: added[0].createdAt },
      origin ?? { source: ORIGIN_OF[source] },
    );
  }
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
  optOut: async (projectId, phone, reason, callId) => {
    await addToDoNotCall(db, projectId, phone, 'opt_out', reason, { source: 'call', callId: callId ?? null });
  },
});
