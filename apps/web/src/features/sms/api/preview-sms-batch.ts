import type { SmsBatchMapping, SmsBatchPreview } from '@callpilot/contracts';
import { post } from '@/lib/request';
import { smsUrl } from './sms-query-keys';

/** Recounts the same upload with another column mapping. */
export function previewSmsBatch(
  projectId: string,
  uploadId: string,
  mapping: SmsBatchMapping,
): Promise<SmsBatchPreview> {
  return post<SmsBatchPreview>(
    smsUrl(projectId, `/batches/uploads/${encodeURIComponent(uploadId)}/preview`),
    { mapping },
    { showLoading: false, showError: false },
  );
}
