import { randomUUID } from 'node:crypto';
import { type LoginRequest, normalizePhone, type RegisterRequest } from '@callpilot/contracts';
import { and, eq, ne } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { sessions, users } from '../../db/schema';
import { AppError, conflict } from '../../lib/errors';
import { recordAudit } from '../audit/audit.service';
import { verifyCode } from '../codes/codes.service';
import {
  assertLoginAllowed,
  clearLoginFailures,
  type LoginLimitOptions,
  recordLoginFailure,
} from './login-limit';
import { dummyHash, hashPassword, verifyPassword } from './password';
import { createSession, deleteSession } from './sessions.service';
import { describeDevice } from './user-agent';

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
    .select({ id: users.id, email: users.email, passwordHash: users.passwordHash })
    .from(users)
    .where(byPhone ? eq(users.phone, value) : eq(users.email, value))
    .limit(1);

  if (input.password === undefined && input.code !== undefined) {
    try {
      await verifyCode(db, { purpose: 'login', target: value, code: input.code, consume: true }, now);
    } catch (err) {
      await recordLoginFailure(db, account, meta.ip, now);
      await recordFailedLogin(db, value, meta, '验证码错误');
      throw err;
    }
    // A code is only ever sent to a phone that has an account; this is belt and braces.
    if (!user) throw invalidCredentials();
  } else {
    const valid = await verifyPassword(input.password ?? '', user?.passwordHash ?? (await dummyHash));
    if (!user || !valid) {
      await recordLoginFailure(db, account, meta.ip, now);
      await recordFailedLogin(db, value, meta, user ? '密码错误' : '账号不存在');
      throw invalidCredentials();
    }
  }
  await clearLoginFailures(db, account);
  return db.transaction(async (tx) => {
    const session = await createSession(tx, user.id, meta, now);
    await recordAudit(tx, {
      projectId: null,
      userId: user.id,
      actor: user.email,
      action: 'auth.login',
      summary: `${byPhone ? (input.code !== undefined ? '短信验证码' : '手机号+密码') : '邮箱+密码'}登录，${describeDevice(meta.userAgent)}`,
      ip: meta.ip,
    });
    return session;
  });
}

/**
 * A failed login names no user (the account may not exist, and the entry must not tell which
 * accounts do); the actor is what was typed, which is how the account's owner finds it later.
 */
const recordFailedLogin = (db: Database, typed: string, meta: ClientMeta, reason: string) =>
  recordAudit(db, {
    projectId: null,
    userId: null,
    actor: typed,
    action: 'auth.login_failed',
    summary: `${reason}，${describeDevice(meta.userAgent)}`,
    ip: meta.ip,
  });

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
  await db.transaction(async (tx) => {
    await setPassword(tx, user.id, input.password);
    await tx
      .delete(sessions)
      .where(and(eq(sessions.userId, user.id), ne(sessions.tokenHash, user.tokenHash)));
    await recordAudit(tx, {
      projectId: null,
      userId: user.id,
      actor: user.email,
      action: 'auth.password_changed',
      summary: '修改密码，其他设备已下线',
      ip,
    });
  });
}

export async function endAllSessions(db: Database, userId: string) {
  await db.delete(sessions).where(eq(sessions.userId, userId));
}
