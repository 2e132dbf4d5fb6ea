import { randomUUID } from 'node:crypto';
import { and, asc, eq, gt, or } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { loginFailures } from '../../db/schema';
import { AppError } from '../../lib/errors';

export const MAX_FAILURES = 5;
export const FAILURE_WINDOW_MS = 15 * 60 * 1000;

const shanghaiTime = new Intl.DateTimeFormat('zh-CN', {
  timeZone: 'Asia/Shanghai',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** Rounded up to the minute, so "retry after HH:mm" is never a moment that is still locked. */
export const retryTimeText = (at: Date) =>
  shanghaiTime.format(new Date(Math.ceil(at.getTime() / 60_000) * 60_000));

/**
 * The lock lives in the database, not in memory, so it holds across every API process and
 * a restart. It is checked per account (a guessed password) and per IP (one client trying many
 * accounts): five failures inside fifteen minutes lock until the oldest of those five ages out.
 */
export async function assertLoginAllowed(db: Database, account: string, ip: string, now = new Date()) {
  const since = new Date(now.getTime() - FAILURE_WINDOW_MS);
  const rows = await db
    .select({ account: loginFailures.account, ip: loginFailures.ip, createdAt: loginFailures.createdAt })
    .from(loginFailures)
    .where(
      and(
        gt(loginFailures.createdAt, since),
        or(eq(loginFailures.account, account), eq(loginFailures.ip, ip)),
      ),
    )
    .orderBy(asc(loginFailures.createdAt));
  let retryAt: number | undefined;
  for (const key of ['account', 'ip'] as const) {
    const mine = rows.filter((r) => r[key] === (key === 'account' ? account : ip));
    if (mine.length >= MAX_FAILURES) {
      const unlock = mine[mine.length - MAX_FAILURES]!.createdAt.getTime() + FAILURE_WINDOW_MS;
      retryAt = Math.max(retryAt ?? 0, unlock);
    }
  }
  if (retryAt !== undefined) {
    throw new AppError(
      429,
      'RATE_LIMITED',
      `登录失败次数过多，请在 ${retryTimeText(new Date(retryAt))} 后重试`,
    );
  }
}

export async function recordLoginFailure(db: Database, account: string, ip: string, now = new Date()) {
  await db.insert(loginFailures).values({ id: randomUUID(), account, ip, createdAt: now });
}

/** A successful login forgives the account; the IP's count stays, or one good account would reset it. */
export async function clearLoginFailures(db: Database, account: string) {
  await db.delete(loginFailures).where(eq(loginFailures.account, account));
}
