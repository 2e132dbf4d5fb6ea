import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { users } from '../../db/schema';
import { AppError } from '../../lib/errors';
import { dummyHash, verifyPassword } from './password';
import { createSession } from './sessions.service';

export async function loginWithPassword(
  db: Database,
  input: { email?: string; password?: string },
  meta: { userAgent: string; ip: string },
) {
  if (!input.email || !input.password) throw new AppError(400, 'BAD_REQUEST', '暂不支持手机号登录');
  const [user] = await db
    .select({ id: users.id, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(users.email, input.email.toLowerCase()))
    .limit(1);
  const valid = await verifyPassword(input.password, user?.passwordHash ?? (await dummyHash));
  // One message for both cases, so the answer does not reveal which e-mails have accounts.
  if (!user || !valid) throw new AppError(401, 'INVALID_CREDENTIALS', '邮箱或密码错误');
  return createSession(db, user.id, meta);
}
