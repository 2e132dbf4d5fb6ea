import { z } from 'zod';
import { entityId, paged, pageQuery } from './common';

/**
 * 批量发送: a CSV/XLSX list (≤ 100,000 rows) is uploaded with a signature and a template, previewed
 * with a column mapping (phone + one column per template variable), then committed: every accepted
 * row becomes an SMS record (source 'batch'), every refused row is kept with its reason.
 */

/** Which column holds the phone, and which column fills each template variable ('' = none). */
export const smsBatchMapping = z
  .object({
    phone: z.string({ error: '请选择手机号列' }).min(1, { error: '请选择手机号列' }).max(200),
    variables: z.record(z.string().max(30), z.string().max(200)).default({}),
  })
  .meta({ id: 'SmsBatchMapping' });
export type SmsBatchMapping = z.infer<typeof smsBatchMapping>;

/** Why a row is refused, counted separately in the preview. */
export const smsBatchRejectKind = z.enum(['invalid', 'duplicate', 'opted_out', 'variable', 'over_cap']);
export type SmsBatchRejectKind = z.infer<typeof smsBatchRejectKind>;
export const SMS_BATCH_REJECT_LABELS: Record<SmsBatchRejectKind, string> = {
  invalid: '号码无效',
  duplicate: '号码重复',
  opted_out: '免打扰名单',
  variable: '变量缺失或过长',
  over_cap: '超过每日上限',
};

export const smsBatchUploadQuery = z.object({
  signatureId: entityId('签名'),
  templateId: entityId('模板'),
});

export const smsBatchPreview = z
  .object({
    uploadId: z.string(),
    fileName: z.string(),
    signatureId: z.string(),
    templateId: z.string(),
    headers: z.array(z.string()),
    /** The template's variables, in order: each needs a column. */
    variables: z.array(z.string()),
    /** The first rows as the file has them, header → cell. */
    sample: z.array(z.record(z.string(), z.string())),
    mapping: smsBatchMapping,
    rows: z.number().int(),
    valid: z.number().int(),
    counts: z.record(smsBatchRejectKind, z.number().int()),
    /** The first accepted rows as they will be sent, with their billed parts. */
    texts: z.array(
      z.object({ row: z.number().int(), phone: z.string(), content: z.string(), parts: z.number().int() }),
    ),
    /** Billed parts of every accepted row together. */
    estimatedParts: z.number().int(),
    /** 推广 outside 08:00–20:00 China time: when the accepted rows would go out. */
    sendAfter: z.iso.datetime().nullable(),
  })
  .meta({ id: 'SmsBatchPreview' });
export type SmsBatchPreview = z.infer<typeof smsBatchPreview>;

export const smsBatchPreviewRequest = z.object({ mapping: smsBatchMapping });
export const smsBatchCommitRequest = z.object({ mapping: smsBatchMapping });

export const smsBatchReject = z.object({ row: z.number().int(), phone: z.string(), reason: z.string() });
export type SmsBatchReject = z.infer<typeof smsBatchReject>;

export const smsBatch = z
  .object({
    id: z.string(),
    fileName: z.string(),
    signatureId: z.string(),
    signatureName: z.string(),
    templateId: z.string(),
    templateName: z.string(),
    total: z.number().int(),
    accepted: z.number().int(),
    rejected: z.number().int(),
    /** Progress of the accepted rows so far (the sending worker moves them). */
    waiting: z.number().int(),
    sent: z.number().int(),
    delivered: z.number().int(),
    failed: z.number().int(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'SmsBatch' });
export type SmsBatch = z.infer<typeof smsBatch>;
export const smsBatchList = paged(smsBatch).meta({ id: 'SmsBatchList' });
export type SmsBatchList = z.infer<typeof smsBatchList>;
export const smsBatchListQuery = pageQuery;

export const smsBatchTemplateQuery = z.object({ templateId: entityId('模板') });
