import { z } from 'zod';

export const email = z.email({ error: '邮箱格式不正确' }).max(254, { error: '邮箱长度不能超过 254 个字符' });

/** Mainland mobile numbers, optionally written with +86 / 86; the server stores the bare 11 digits. */
export const phone = z
  .string({ error: '请输入手机号' })
  .regex(/^(?:\+?86)?1[3-9]\d{9}$/, { error: '手机号格式不正确' });
export const normalizePhone = (value: string) => value.slice(-11);

/** Rules for a password being set (login only checks it is there). */
export const password = z
  .string({ error: '请输入密码' })
  .min(8, { error: '密码至少 8 位' })
  .max(128, { error: '密码不能超过 128 位' })
  .regex(/[A-Za-z]/, { error: '密码须同时包含字母和数字' })
  .regex(/\d/, { error: '密码须同时包含字母和数字' });

export const verificationCode = z
  .string({ error: '请输入验证码' })
  .regex(/^\d{6}$/, { error: '验证码为 6 位数字' });

export const displayName = z
  .string({ error: '请输入昵称' })
  .trim()
  .min(1, { error: '请输入昵称' })
  .max(50, { error: '昵称不能超过 50 个字符' });

/**
 * One login body for three ways in: e-mail + password, phone + password, phone + SMS code.
 * Kept as one object (not a union) so a mistake is reported against the field that is wrong.
 */
export const loginRequest = z
  .object({
    email: email.optional(),
    phone: phone.optional(),
    password: z.string({ error: '请输入密码' }).min(1, { error: '请输入密码' }).max(128).optional(),
    code: verificationCode.optional(),
  })
  .superRefine((v, ctx) => {
    if (!v.email && !v.phone)
      ctx.addIssue({ code: 'custom', path: ['email'], message: '请输入邮箱或手机号' });
    if (v.email && v.phone)
      ctx.addIssue({ code: 'custom', path: ['phone'], message: '邮箱和手机号只能填写一个' });
    if (v.email && !v.password) ctx.addIssue({ code: 'custom', path: ['password'], message: '请输入密码' });
    if (v.phone && !v.password && !v.code) {
      ctx.addIssue({ code: 'custom', path: ['password'], message: '请输入密码或验证码' });
    }
    if (v.email && v.code)
      ctx.addIssue({ code: 'custom', path: ['code'], message: '验证码登录仅支持手机号' });
  })
  .meta({ id: 'LoginRequest' });
export type LoginRequest = z.infer<typeof loginRequest>;

export const registerRequest = z.object({ email, password, displayName }).meta({ id: 'RegisterRequest' });
export type RegisterRequest = z.infer<typeof registerRequest>;

/** SMS code for logging in by phone. */
export const smsCaptchaRequest = z.object({ phone }).meta({ id: 'SmsCaptchaRequest' });
export type SmsCaptchaRequest = z.infer<typeof smsCaptchaRequest>;

/** Where a one-time code went, without revealing whether an account exists there. */
export const codeSent = z
  .object({
    channel: z.enum(['email', 'sms']),
    resendAfterSeconds: z.number().int(),
    expiresInSeconds: z.number().int(),
  })
  .meta({ id: 'CodeSent' });
export type CodeSent = z.infer<typeof codeSent>;

/** Forgotten password by code: the target is an e-mail address or a phone number. */
export const codeTarget = z
  .string({ error: '请输入邮箱或手机号' })
  .trim()
  .min(1, { error: '请输入邮箱或手机号' })
  .max(254, { error: '邮箱或手机号过长' })
  .refine((v) => email.safeParse(v).success || phone.safeParse(v).success, {
    error: '请输入正确的邮箱或手机号',
  });

export const sendCodeRequest = z.object({ target: codeTarget }).meta({ id: 'SendCodeRequest' });
export const verifyCodeQuery = z.object({ target: codeTarget, code: verificationCode });
export const codeVerified = z.object({ valid: z.literal(true) }).meta({ id: 'CodeVerified' });
export const resetPasswordByCodeRequest = z
  .object({ target: codeTarget, code: verificationCode, password })
  .meta({ id: 'ResetPasswordByCodeRequest' });
export type ResetPasswordByCodeRequest = z.infer<typeof resetPasswordByCodeRequest>;

/** Forgotten password by e-mailed link: the link carries a one-time token to /forget-password. */
export const resetPasswordMailRequest = z.object({ email }).meta({ id: 'ResetPasswordMailRequest' });
export const resetPasswordDoneRequest = z
  .object({
    token: z.string({ error: '重置链接无效' }).min(20, { error: '重置链接无效' }).max(200),
    password,
  })
  .meta({ id: 'ResetPasswordDoneRequest' });
export type ResetPasswordDoneRequest = z.infer<typeof resetPasswordDoneRequest>;

/** A logged-in user changing their password directly. */
export const changePasswordRequest = z
  .object({
    oldPassword: z.string({ error: '请输入当前密码' }).min(1, { error: '请输入当前密码' }).max(128),
    password,
  })
  .meta({ id: 'ChangePasswordRequest' });

export const profileUpdate = z
  .object({
    displayName,
    profile: z.string({ error: '简介须为文本' }).max(500, { error: '简介不能超过 500 个字符' }).default(''),
  })
  .meta({ id: 'ProfileUpdate' });
export type ProfileUpdate = z.infer<typeof profileUpdate>;

/** Third-party login (OpenID Connect). */
export const oidcConfig = z.object({ enabled: z.boolean(), name: z.string() }).meta({ id: 'OidcConfig' });
export const oidcStart = z.object({ authorizationUrl: z.string() }).meta({ id: 'OidcStart' });
/** After a third-party login: the session, and where the user was going when it started. */
export const oidcLoginResult = z
  .object({ token: z.string(), expiresAt: z.iso.datetime(), redirect: z.string() })
  .meta({ id: 'OidcLoginResult' });
export type OidcLoginResult = z.infer<typeof oidcLoginResult>;

export const oidcCallbackRequest = z
  .object({
    code: z.string({ error: '缺少授权码' }).min(1, { error: '缺少授权码' }).max(2048),
    state: z.string({ error: '缺少 state 参数' }).min(1, { error: '缺少 state 参数' }).max(256),
    /** The `iss` query parameter of the callback (RFC 9207), passed through when the provider sends one. */
    iss: z.string().max(2048).optional(),
  })
  .meta({ id: 'OidcCallbackRequest' });

export const sessionToken = z
  .object({
    token: z.string(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'SessionToken' });
export type SessionToken = z.infer<typeof sessionToken>;

export const projectRole = z.enum(['owner', 'admin', 'member', 'readonly']);
export type ProjectRole = z.infer<typeof projectRole>;

export const projectSummary = z
  .object({
    id: z.string(),
    name: z.string(),
    company: z.string(),
    industry: z.string(),
    disabled: z.boolean(),
    role: projectRole,
  })
  .meta({ id: 'ProjectSummary' });
export type ProjectSummary = z.infer<typeof projectSummary>;

/** The spec's user-store shape: the first project is the current one. */
export const currentUser = z
  .object({
    isOwnerOrAdmin: z.boolean(),
    id: z.string(),
    email: z.string(),
    displayName: z.string(),
    profile: z.string(),
    projects: z.array(projectSummary),
    /** The role in the current (first) project, null without one: the console hides what it cannot do. */
    role: projectRole.nullable(),
  })
  .meta({ id: 'CurrentUser' });
export type CurrentUser = z.infer<typeof currentUser>;
