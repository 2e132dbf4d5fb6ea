import { type CodeSent, email as emailSchema, normalizePhone } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { users } from '../../db/schema';
import { AppError } from '../../lib/errors';
import type { Providers } from '../../providers';
import { recordAudit } from '../audit/audit.service';
import {
  CODE_GONE,
  CODE_TTL_MS,
  consumeLinkToken,
  issueCode,
  issueLinkToken,
  LINK_INVALID,
  LINK_TTL_MS,
  RESEND_AFTER_MS,
  verifyCode,
  withdrawCode,
} from '../codes/codes.service';
import { setPassword } from './auth.service';

const PRODUCT = '智能语音外呼平台';

/** An e-mail address (lower-cased) or a bare 11-digit phone number, and how to reach it. */
export function parseTarget(raw: string): { channel: 'email' | 'sms'; target: string } {
  const value = raw.trim();
  return emailSchema.safeParse(value).success
    ? { channel: 'email', target: value.toLowerCase() }
    : { channel: 'sms', target: normalizePhone(value) };
}

async function findUserId(db: Database, channel: 'email' | 'sms', target: string) {
  const [user] = await db
    .select({ id: users.id })
    .from(users)
    .where(channel === 'email' ? eq(users.email, target) : eq(users.phone, target))
    .limit(1);
  return user?.id;
}

/** The new password and its entry in the user's account log commit together. */
async function resetPassword(db: Database, userId: string, password: string, how: string, ip: string) {
  await db.transaction(async (tx) => {
    await setPassword(tx, userId, password);
    const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
    await recordAudit(tx, {
      projectId: null,
      userId,
      actor: user?.email ?? '',
      action: 'auth.password_reset',
      summary: `${how}重置密码，所有设备已下线`,
      ip,
    });
  });
}

const sent = (channel: 'email' | 'sms', ttlMs: number): CodeSent => ({
  channel,
  resendAfterSeconds: RESEND_AFTER_MS / 1000,
  expiresInSeconds: ttlMs / 1000,
});

// A provider failure must not surface its internals to the caller; the error handler logs the cause.
async function deliver(db: Database, codeId: string, send: () => Promise<void>) {
  try {
    await send();
  } catch (err) {
    // Undelivered, so it must not hold the one-per-minute throttle against a retry.
    await withdrawCode(db, codeId);
    throw new AppError(503, 'SERVICE_UNAVAILABLE', '消息发送失败，请稍后重试', { cause: err });
  }
}

/**
 * Codes are issued (and throttled) whether or not an account exists, and only sent when one
 * does: the answer and its timing-independent throttle then reveal nothing about accounts.
 */
export async function sendLoginCode(db: Database, providers: Providers, phone: string, now = new Date()) {
  const target = normalizePhone(phone);
  const { id, code } = await issueCode(db, 'login', target, now);
  if (await findUserId(db, 'sms', target)) {
    await deliver(db, id, () =>
      providers.sms.send({
        to: target,
        text: `【${PRODUCT}】您的登录验证码为 ${code}，10 分钟内有效。如非本人操作，请忽略。`,
      }),
    );
  }
  return sent('sms', CODE_TTL_MS);
}

export async function sendResetCode(db: Database, providers: Providers, rawTarget: string, now = new Date()) {
  const { channel, target } = parseTarget(rawTarget);
  const { id, code } = await issueCode(db, 'reset_password', target, now);
  if (await findUserId(db, channel, target)) {
    const text = `您正在重置${PRODUCT}的登录密码，验证码为 ${code}，10 分钟内有效。如非本人操作，请忽略。`;
    await deliver(db, id, () =>
      channel === 'email'
        ? providers.email.send({ to: target, subject: `【${PRODUCT}】重置密码验证码`, text })
        : providers.sms.send({ to: target, text: `【${PRODUCT}】${text}` }),
    );
  }
  return sent(channel, CODE_TTL_MS);
}

export async function checkResetCode(db: Database, rawTarget: string, code: string, now = new Date()) {
  const { target } = parseTarget(rawTarget);
  await verifyCode(db, { purpose: 'reset_password', target, code, consume: false }, now);
}

/** Answers the user whose password was reset, so the caller can end their sessions everywhere. */
export async function resetPasswordByCode(
  db: Database,
  input: { target: string; code: string; password: string },
  ip: string,
  now = new Date(),
): Promise<string> {
  const { channel, target } = parseTarget(input.target);
  await verifyCode(db, { purpose: 'reset_password', target, code: input.code, consume: true }, now);
  const userId = await findUserId(db, channel, target);
  if (!userId) throw new AppError(400, 'CODE_INVALID', CODE_GONE);
  await resetPassword(db, userId, input.password, channel === 'email' ? '凭邮箱验证码' : '凭短信验证码', ip);
  return userId;
}

export async function sendPasswordLink(
  db: Database,
  providers: Providers,
  input: { email: string; baseUrl: string; purpose: 'reset_link' | 'change_password' },
  now = new Date(),
) {
  const target = input.email.toLowerCase();
  const { id, token } = await issueLinkToken(db, input.purpose, target, now);
  if (await findUserId(db, 'email', target)) {
    const link = `${input.baseUrl.replace(/\/+$/, '')}/forget-password?token=${token}`;
    const what = input.purpose === 'reset_link' ? '重置' : '修改';
    await deliver(db, id, () =>
      providers.email.send({
        to: target,
        subject: `【${PRODUCT}】${what}密码`,
        text: `请在 30 分钟内打开以下链接${what}登录密码（仅可使用一次）：\n${link}\n\n如非本人操作，请忽略本邮件。`,
      }),
    );
  }
  return sent('email', LINK_TTL_MS);
}

export async function resetPasswordByLink(
  db: Database,
  input: { token: string; password: string },
  ip: string,
  now = new Date(),
): Promise<string> {
  const target = await consumeLinkToken(db, input.token, now);
  const userId = await findUserId(db, 'email', target);
  if (!userId) throw new AppError(400, 'CODE_INVALID', LINK_INVALID);
  await resetPassword(db, userId, input.password, '凭邮件链接', ip);
  return userId;
}
