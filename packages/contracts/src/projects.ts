import { z } from 'zod';
import { projectRole } from './auth';

const text = (label: string, max: number) =>
  z
    .string({ error: `请输入${label}` })
    .trim()
    .min(1, { error: `请输入${label}` })
    .max(max, { error: `${label}不能超过 ${max} 个字符` });

export const projectRegisterRequest = z
  .object({ name: text('项目名称', 50), company: text('公司名称', 100), industry: text('所属行业', 50) })
  .meta({ id: 'ProjectRegisterRequest' });
export type ProjectRegisterRequest = z.infer<typeof projectRegisterRequest>;

/** The spec's balance/limit record: with hasBalance false everything is available. */
export const balanceLimit = z
  .object({
    assistantLimit: z.number().int(),
    knowledgeLimit: z.number().int(),
    ttsCloneLimit: z.number().int(),
    hasBalance: z.boolean(),
    concurrentCallin: z.number().int(),
    concurrentCallout: z.number().int(),
  })
  .meta({ id: 'BalanceLimit' });
export type BalanceLimit = z.infer<typeof balanceLimit>;

/** Money is kept in fen (1/100 yuan) as an integer, never as a float. */
export const projectBalance = z
  .object({ balanceFen: z.number().int(), hasBalance: z.boolean() })
  .meta({ id: 'ProjectBalance' });
export type ProjectBalance = z.infer<typeof projectBalance>;

export const projectMember = z
  .object({
    userId: z.string(),
    email: z.string(),
    displayName: z.string(),
    role: projectRole,
    joinedAt: z.iso.datetime(),
  })
  .meta({ id: 'ProjectMember' });
export type ProjectMember = z.infer<typeof projectMember>;

export const projectIdParams = z.object({
  projectId: z
    .string({ error: '缺少项目 ID' })
    .min(1, { error: '缺少项目 ID' })
    .max(64, { error: '项目 ID 不正确' }),
});
