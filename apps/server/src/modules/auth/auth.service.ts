import { randomUUID } from 'node:crypto';
import { type LoginRequest, normalizePhone, type RegisterRequest } from '@callpilot/contracts';
import { and, eq, ne } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { sessions, users } from '../../db/schema';
import { AppError, conflict } from '../../lib/errors';
import { verifyCode } from '../codes/codes.service';
import {
  assertLoginAllowed,
  clearLoginFailures,
  type LoginLimitOptions,
  recordLoginFailure,
} from './login-limit';
import { dummyHash, hashPassword, verifyPassword } from './password';
import { createSession, deleteSession } from './sessions.service';

export interface ClientMeta {
  userAgent: string;
  ip: string;
}

// One message for unknown accounts and wrong passwords, so the answer reveals no accounts.
export const INVALID_CREDENTIALS = '账号或密码错误';
const invalidCredentials = () => new AppError(401, 'INVALID_CREDENTIALS', INVALID_CREDENTIALS);

export async function login(
  db: Database,
  input: LoginRequest,
  meta: ClientMeta,
  { now = new Date(), sleep }: LoginLimitOptions = {},
) {
  const byPhone = !input.email && input.phone !== undefined;
  const value = byPhone ? normalizePhone(input.phone!) : input.email!.toLowerCase();
  const account = `${byPhone ? 'phone' : 'email'}:${value}`;
  await assertLoginAllowed(db, account, meta.ip, { now, sleep });

  const [user] = await db
    .select({ id: users.id, passwordHash: users.passwordHash })
    .from(users)
    .where(byPhone ? eq(users.phone, value) : eq(users.email, value))
    .limit(1);

  if (input.password === undefined && input.code !== undefined) {
    try {
      await verifyCode(db, { purpose: 'login', target: value, code: input.code, consume: true }, now);
    } catch (err) {
      await recordLoginFailure(db, account, meta.ip, now);
      throw err;
    }
    // A code is only ever sent to a phone that has an account; this is belt and braces.
    if (!user) throw invalidCredentials();
  } else {
    const valid = await verifyPassword(input.password ?? '', user?.passwordHash ?? (await dummyHash));
    if (!user || !valid) {
      await recordLoginFailure(db, account, meta.ip, now);
      throw invalidCredentials();
    }
  }
  await clearLoginFailures(db, account);
  return createSession(db, user.id, meta, now);
}

export async function register(db: Database, input: RegisterRequest, meta: ClientMeta) {
  const id = randomUUID();
  const email = input.email.toLowerCase();
  const inserted = await db
    .insert(users)
    .values({ id, email, passwordHash: await hashPassword(input.password), displayName: input.displayName })
    .onConflictDoNothing()
    .returning({ id: users.id });
  if (inserted.length === 0) throw conflict('该邮箱已注册');
  return createSession(db, id, meta);
}

/** A new token for the same user; the old one stops working at once. */
export async function refreshSession(db: Database, userId: string, oldTokenHash: string, meta: ClientMeta) {
  const session = await createSession(db, userId, meta);
  await deleteSession(db, oldTokenHash);
  return session;
}

export async function setPassword(db: Database, userId: string, password: string) {
  await db
    .update(users)
    .set({ passwordHash: await hashPassword(password), updatedAt: new Date() })
    .where(eq(users.id, userId));
}

/**
 * Changes the password of a logged-in user; every other session of theirs ends. Wrong current
 * passwords count against the same lock as failed logins, or a stolen session could guess it.
 */
export async function changePassword(
  db: Database,
  user: { id: string; email: string; tokenHash: string },
  input: { oldPassword: string; password: string },
  ip: string,
  limit: LoginLimitOptions = {},
) {
  const account = `email:${user.email}`;
  await assertLoginAllowed(db, account, ip, limit);
  const [row] = await db
    .select({ passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.id, user.id))
    .limit(1);
  if (!row || !(await verifyPassword(input.oldPassword, row.passwordHash))) {
    await recordLoginFailure(db, account, ip);
    throw new AppError(400, 'BAD_REQUEST', '字段 oldPassword：当前密码不正确');
  }
  await setPassword(db, user.id, input.password);
  await db.delete(sessions).where(and(eq(sessions.userId, user.id), ne(sessions.tokenHash, user.tokenHash)));
}

export async function endAllSessions(db: Database, userId: string) {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}
