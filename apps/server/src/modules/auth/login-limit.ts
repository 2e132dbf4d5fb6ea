import { randomUUID } from 'node:crypto';
import { and, count, desc, eq, gt } from 'drizzle-orm';
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
 * From one IP address, failures on any accounts never lock anyone out: call centres put a whole
 * office behind one NAT address, and one agent's typos must not lock out the rest. Past
 * IP_DELAY_FROM failures in the window, each attempt from that address waits a little longer
 * instead (IP_DELAY_STEP_MS more per failure, at most IP_DELAY_MAX_MS), which slows a client
 * trying many accounts without refusing anyone's correct password.
 */
export const IP_DELAY_FROM = 20;
export const IP_DELAY_STEP_MS = 250;
export const IP_DELAY_MAX_MS = 5000;

/** How long an attempt waits after `failures` failures from its address within the window. */
export const ipDelayMs = (failures: number) =>
  failures < IP_DELAY_FROM ? 0 : Math.min((failures - IP_DELAY_FROM + 1) * IP_DELAY_STEP_MS, IP_DELAY_MAX_MS);

export type Sleep = (ms: number) => Promise<void>;
export const realSleep: Sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export interface LoginLimitOptions {
  now?: Date;
  /** Waits out the per-IP delay; tests pass one that records it instead. */
  sleep?: Sleep;
}

/**
 * Both counts live in the database, not in memory, so they hold across every API process and a
 * restart. Per account (a guessed password): five failures inside fifteen minutes lock it until
 * the oldest of those five ages out. Per IP: a delay, never a lock (see IP_DELAY_FROM). The delay
 * comes first and applies to every attempt from the address, right or wrong, so its length says
 * nothing about the password.
 */
export async function assertLoginAllowed(
  db: Database,
  account: string,
  ip: string,
  { now = new Date(), sleep = realSleep }: LoginLimitOptions = {},
) {
  const since = new Date(now.getTime() - FAILURE_WINDOW_MS);
  const [[fromIp], accountFailures] = await Promise.all([
    db
      .select({ n: count() })
      .from(loginFailures)
      .where(and(eq(loginFailures.ip, ip), gt(loginFailures.createdAt, since))),
    db
      .select({ createdAt: loginFailures.createdAt })
      .from(loginFailures)
      .where(and(eq(loginFailures.account, account), gt(loginFailures.createdAt, since)))
      .orderBy(desc(loginFailures.createdAt))
      .limit(MAX_FAILURES),
  ]);
  const delay = ipDelayMs(fromIp?.n ?? 0);
  if (delay > 0) await sleep(delay);
  if (accountFailures.length >= MAX_FAILURES) {
    const unlock = accountFailures[MAX_FAILURES - 1]!.createdAt.getTime() + FAILURE_WINDOW_MS;
    throw new AppError(
      429,
      'RATE_LIMITED',
      `登录失败次数过多，请在 ${retryTimeText(new Date(unlock))} 后重试`,
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
