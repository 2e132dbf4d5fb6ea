import { createHash, randomBytes } from 'node:crypto';
import { and, desc, eq, gt, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { sessions, users } from '../../db/schema';
import { notFound } from '../../lib/errors';
import { describeDevice } from './user-agent';

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;
// Sliding expiry is refreshed at most this often, so authenticated reads stay read-only.
const REFRESH_AFTER_MS = 3600 * 1000;

export const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export interface SessionUser {
  id: string;
  email: string;
  displayName: string;
  profile: string;
  tokenHash: string;
  expiresAt: Date;
}

export async function createSession(
  db: Database,
  userId: string,
  meta: { userAgent: string; ip: string },
  now = new Date(),
) {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await db.insert(sessions).values({
    tokenHash: hashToken(token),
    userId,
    createdAt: now,
    lastSeenAt: now,
    expiresAt,
    userAgent: meta.userAgent.slice(0, 512),
    ip: meta.ip,
  });
  return { token, expiresAt };
}

/** Takes the token's hash, not the token, so callers that cache by hash hash only once. */
export async function findSessionUser(
  db: Database,
  tokenHash: string,
  now = new Date(),
): Promise<SessionUser | null> {
  const [row] = await db
    .select({
      id: users.id,
      email: users.email,
      displayName: users.displayName,
      profile: users.profile,
      lastSeenAt: sessions.lastSeenAt,
      expiresAt: sessions.expiresAt,
    })
    .from(sessions)
    .innerJoin(users, eq(users.id, sessions.userId))
    .where(and(eq(sessions.tokenHash, tokenHash), gt(sessions.expiresAt, now)))
    .limit(1);
  if (!row) return null;
  const { lastSeenAt, ...user } = row;
  if (now.getTime() - lastSeenAt.getTime() > REFRESH_AFTER_MS) {
    user.expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
    await db
      .update(sessions)
      .set({ lastSeenAt: now, expiresAt: user.expiresAt })
      .where(eq(sessions.tokenHash, tokenHash));
  }
  return { ...user, tokenHash };
}

export async function deleteSession(db: Database, tokenHash: string) {
  await db.delete(sessions).where(eq(sessions.tokenHash, tokenHash));
}

export async function deleteExpiredSessions(db: Database, now = new Date()) {
  await db.delete(sessions).where(lt(sessions.expiresAt, now));
}

/**
 * How a session is named outside the server: the first 16 hex digits of its token hash. The
 * schema has no other id for it; 64 bits of a SHA-256 name one of a user's few sessions and
 * give nothing towards the token (finding one that matches is as hard as guessing it).
 */
export const sessionPublicId = (tokenHash: string) => tokenHash.slice(0, 16);

/** A user's live sessions, the one making the request first, then the most recently used. */
export async function listUserSessions(
  db: Database,
  userId: string,
  currentTokenHash: string,
  now = new Date(),
) {
  const rows = await db
    .select()
    .from(sessions)
    .where(and(eq(sessions.userId, userId), gt(sessions.expiresAt, now)))
    .orderBy(desc(sessions.lastSeenAt));
  return rows
    .map((row) => ({
      id: sessionPublicId(row.tokenHash),
      device: describeDevice(row.userAgent),
      userAgent: row.userAgent,
      ip: row.ip,
      createdAt: row.createdAt.toISOString(),
      lastSeenAt: row.lastSeenAt.toISOString(),
      current: row.tokenHash === currentTokenHash,
    }))
    .sort((a, b) => Number(b.current) - Number(a.current));
}

/** Ends one of the user's own sessions by its public id; another user's answers as unknown. */
export async function endUserSession(db: Database, userId: string, publicId: string) {
  const ended = await db
    .delete(sessions)
    .where(and(eq(sessions.userId, userId), sql`left(${sessions.tokenHash}, 16) = ${publicId}`))
    .returning({ tokenHash: sessions.tokenHash, userAgent: sessions.userAgent, ip: sessions.ip });
  if (ended.length === 0) throw notFound('会话不存在或已结束');
  return ended;
}
