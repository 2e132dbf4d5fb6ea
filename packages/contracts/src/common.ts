import { z } from 'zod';

/** A required, trimmed text field whose messages name the field in Chinese. */
export const requiredText = (label: string, max: number) =>
  z
    .string({ error: `请输入${label}` })
    .trim()
    .min(1, { error: `请输入${label}` })
    .max(max, { error: `${label}不能超过 ${max} 个字符` });

/** An optional text field (empty allowed) with a length cap. */
export const optionalText = (label: string, max: number) =>
  z
    .string({ error: `${label}须为文本` })
    .trim()
    .max(max, { error: `${label}不能超过 ${max} 个字符` });

export const entityId = (label: string) =>
  z
    .string({ error: `缺少${label}` })
    .min(1, { error: `缺少${label}` })
    .max(64, { error: `${label}不正确` });

/** Lists paginate on the server: 1-based page, at most 100 a page. */
export const pageQuery = z.object({
  page: z.coerce
    .number({ error: '页码须为数字' })
    .int({ error: '页码须为整数' })
    .min(1, { error: '页码至少为 1' })
    .default(1),
  pageSize: z.coerce
    .number({ error: '每页条数须为数字' })
    .int({ error: '每页条数须为整数' })
    .min(1, { error: '每页条数至少为 1' })
    .max(100, { error: '每页条数不能超过 100' })
    .default(20),
});
export type PageQuery = z.infer<typeof pageQuery>;

export function paged<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    total: z.number().int(),
    page: z.number().int(),
    pageSize: z.number().int(),
  });
}

export type Paged<T> = { items: T[]; total: number; page: number; pageSize: number };
