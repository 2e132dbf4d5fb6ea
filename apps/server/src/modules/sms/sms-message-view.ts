import type { SmsMessage, SmsTimelineEntry } from '@callpilot/contracts';
import type { smsMessages } from '../../db/schema';

export type SmsMessageRow = typeof smsMessages.$inferSelect;

const iso = (at: Date | null) => (at ? at.toISOString() : null);

/** A send record as the console and the open API see it. */
export function toSmsMessage(row: SmsMessageRow): SmsMessage {
  return {
    id: row.id,
    phone: row.phone,
    signatureName: row.signatureName,
    templateId: row.templateId,
    templateName: row.templateName,
    templateType: row.templateType,
    variables: row.variables as Record<string, string>,
    content: row.content,
    parts: row.parts,
    provider: row.provider,
    providerMessageId: row.providerMessageId,
    status: row.status,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    timeline: row.timeline as SmsTimelineEntry[],
    source: row.source,
    callId: row.callId,
    taskId: row.taskId,
    batchId: row.batchId,
    ruleId: row.ruleId,
    sendAfter: row.sendAfter.toISOString(),
    createdAt: row.createdAt.toISOString(),
    submittedAt: iso(row.submittedAt),
    finishedAt: iso(row.finishedAt),
  };
}
