import { z } from 'zod';

export const email = z.email({ error: '邮箱格式不正确' }).max(254, { error: '邮箱长度不能超过 254 个字符' });
export const password = z
  .string({ error: '请输入密码' })
  .min(8, { error: '密码至少 8 位' })
  .max(128, { error: '密码不能超过 128 位' });

/** Login by e-mail and password; issue 3 adds phone + password and phone + code. */
export const loginRequest = z
  .object({
    email,
    password: z.string({ error: '请输入密码' }).min(1, { error: '请输入密码' }),
  })
  .meta({ id: 'LoginRequest' });
export type LoginRequest = z.infer<typeof loginRequest>;

export const sessionToken = z
  .object({
    token: z.string(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'SessionToken' });
export type SessionToken = z.infer<typeof sessionToken>;

export const projectRole = z.enum(['owner', 'admin', 'member']);
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
  })
  .meta({ id: 'CurrentUser' });
export type CurrentUser = z.infer<typeof currentUser>;
