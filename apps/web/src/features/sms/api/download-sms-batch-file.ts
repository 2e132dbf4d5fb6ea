import { getBlob, saveBlob } from '@/lib/request';
import { smsUrl } from './sms-query-keys';

/** The rows a batch refused (行号, 手机号, 原因), fetched with the token (a plain link could not send it). */
export async function downloadSmsBatchRejects(projectId: string, batchId: string): Promise<void> {
  const file = await getBlob(smsUrl(projectId, `/batches/${encodeURIComponent(batchId)}/rejects`));
  saveBlob(file.blob, file.fileName ?? '未通过的行.csv');
}

/** A CSV to fill in: 手机号 and the template's variables. */
export async function downloadSmsBatchTemplate(projectId: string, templateId: string): Promise<void> {
  const file = await getBlob(smsUrl(projectId, '/batches/template'), { params: { templateId } });
  saveBlob(file.blob, file.fileName ?? '批量发送模板.csv');
}
