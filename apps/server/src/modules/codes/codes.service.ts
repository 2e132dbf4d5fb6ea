import { createHash, randomBytes, randomInt, randomUUID } from 'node:crypto';
import { and, desc, eq, gt, isNull, lt, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { oneTimeCodes } from '../../db/schema';
import { AppError } from '../../lib/errors';

export type CodePurpose = 'login' | 'reset_password';
export type LinkPurpose = 'reset_link' | 'change_password';

export const CODE_TTL_MS = 10 * 60 * 1000;
export const LINK_TTL_MS = 30 * 60 * 1000;
export const RESEND_AFTER_MS = 60 * 1000;
export const MAX_ATTEMPTS = 5;

// The id is mixed in so two targets that happen to draw the same six digits still get distinct
// hashes (the column is unique), and a leaked hash cannot be matched against a table of 10^6 codes.
const hashCode = (id: string, code: string) => createHash('sha256').update(`${id}:${code}`).digest('hex');
const hashLink = (token: string) => createHash('sha256').update(`link:${token}`).digest('hex');

const codeInvalid = (message: string) => new AppError(400, 'CODE_INVALID', message);
export const CODE_GONE = '验证码已过期或不存在，请重新获取';
export const CODE_EXHAUSTED = '验证码错误次数过多，请重新获取';
export const LINK_INVALID = '链接无效或已过期，请重新获取';

/**
 * One throttle for every code and link: at most one per purpose and target per minute, so the
 * endpoints cannot be used to flood someone's inbox or phone.
 */
async function assertResendAllowed(db: Database, purpose: string, target: string, now: Date) {
  const [last] = await db
    .select({ createdAt: oneTimeCodes.createdAt })
    .from(oneTimeCodes)
    .where(
      and(
        eq(oneTimeCodes.purpose, purpose as CodePurpose),
        eq(oneTimeCodes.target, target),
        gt(oneTimeCodes.createdAt, new Date(now.getTime() - RESEND_AFTER_MS)),
      ),
    )
    .orderBy(desc(oneTimeCodes.createdAt))
    .limit(1);
  if (last) {
    const wait = Math.max(1, Math.ceil((last.createdAt.getTime() + RESEND_AFTER_MS - now.getTime()) / 1000));
    throw new AppError(429, 'RATE_LIMITED', `请在 ${wait} 秒后重新获取验证码`);
  }
}

/** Earlier unused codes of the same purpose and target stop working once a new one is issued. */
async function retireActive(db: Database, purpose: string, target: string, now: Date) {
  await db
    .update(oneTimeCodes)
    .set({ consumedAt: now })
    .where(
      and(
        eq(oneTimeCodes.purpose, purpose as CodePurpose),
        eq(oneTimeCodes.target, target),
        isNull(oneTimeCodes.consumedAt),
      ),
    );
}

/**
 * Throttle check, retirement of older codes and the insert as one step per purpose and target:
 * the transaction-scoped advisory lock makes two simultaneous requests (in any process) queue,
 * so the second one sees the first one's code and is throttled instead of sending another.
 */
async function issueOne(
  db: Database,
  purpose: CodePurpose | LinkPurpose,
  target: string,
  now: Date,
  row: (id: string) => { codeHash: string; expiresAt: Date },
) {
  const id = randomUUID();
  await db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`${purpose}:${target}`}))`);
    await assertResendAllowed(tx, purpose, target, now);
    await retireActive(tx, purpose, target, now);
    await tx.insert(oneTimeCodes).values({ id, purpose, target, createdAt: now, ...row(id) });
  });
  return id;
}

/** Issues a 6-digit code; the caller sends it and never returns or logs it. */
export async function issueCode(
  db: Database,
  purpose: CodePurpose,
  target: string,
  now = new Date(),
): Promise<{ id: string; code: string; expiresAt: Date }> {
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const expiresAt = new Date(now.getTime() + CODE_TTL_MS);
  const id = await issueOne(db, purpose, target, now, (rowId) => ({
    codeHash: hashCode(rowId, code),
    expiresAt,
  }));
  return { id, code, expiresAt };
}

/**
 * Checks a code; a wrong guess counts an attempt, and the fifth wrong guess kills the code.
 * `consume` marks it used, so it works exactly once.
 */
export async function verifyCode(
  db: Database,
  input: { purpose: CodePurpose; target: string; code: string; consume: boolean },
  now = new Date(),
): Promise<void> {
  const [row] = await db
    .select()
    .from(oneTimeCodes)
    .where(
      and(
        eq(oneTimeCodes.purpose, input.purpose),
        eq(oneTimeCodes.target, input.target),
        isNull(oneTimeCodes.consumedAt),
        gt(oneTimeCodes.expiresAt, now),
      ),
    )
    .orderBy(desc(oneTimeCodes.createdAt))
    .limit(1);
  if (!row) throw codeInvalid(CODE_GONE);
  if (row.attempts >= MAX_ATTEMPTS) throw codeInvalid(CODE_EXHAUSTED);
  if (hashCode(row.id, input.code) !== row.codeHash) {
    // Counted in the database, atomically, so parallel guesses across processes share the budget.
    const [counted] = await db
      .update(oneTimeCodes)
      .set({ attempts: sql`${oneTimeCodes.attempts} + 1` })
      .where(and(eq(oneTimeCodes.id, row.id), lt(oneTimeCodes.attempts, MAX_ATTEMPTS)))
      .returning({ attempts: oneTimeCodes.attempts });
    const left = counted ? MAX_ATTEMPTS - counted.attempts : 0;
    throw codeInvalid(left > 0 ? `验证码错误，还可尝试 ${left} 次` : CODE_EXHAUSTED);
  }
  if (input.consume) {
    const used = await db
      .update(oneTimeCodes)
      .set({ consumedAt: now })
      .where(and(eq(oneTimeCodes.id, row.id), isNull(oneTimeCodes.consumedAt)))
      .returning({ id: oneTimeCodes.id });
    // Two requests raced with the same code: only one of them may use it.
    if (used.length === 0) throw codeInvalid(CODE_GONE);
  }
}

/** Issues a one-time link token (256 bits); only its hash is stored. */
export async function issueLinkToken(
  db: Database,
  purpose: LinkPurpose,
  target: string,
  now = new Date(),
): Promise<{ id: string; token: string; expiresAt: Date }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + LINK_TTL_MS);
  const id = await issueOne(db, purpose, target, now, () => ({ codeHash: hashLink(token), expiresAt }));
  return { id, token, expiresAt };
}

/** Uses a link token once; answers the target (an e-mail address) it was issued for. */
export async function consumeLinkToken(db: Database, token: string, now = new Date()): Promise<string> {
  const [row] = await db
    .update(oneTimeCodes)
    .set({ consumedAt: now })
    .where(
      and(
        eq(oneTimeCodes.codeHash, hashLink(token)),
        isNull(oneTimeCodes.consumedAt),
        gt(oneTimeCodes.expiresAt, now),
        sql`${oneTimeCodes.purpose} in ('reset_link', 'change_password')`,
      ),
    )
    .returning({ target: oneTimeCodes.target });
  if (!row) throw codeInvalid(LINK_INVALID);
  return row.target;
}

/** Forgets a code that could not be delivered, so the user may ask again at once. */
export async function withdrawCode(db: Database, id: string) {
  await db.delete(oneTimeCodes).where(eq(oneTimeCodes.id, id));
}
