import type { SmsBatchPreview } from '@callpilot/contracts';
import { postForm } from '@/lib/request';
import { smsUrl } from './sms-query-keys';

/**
 * Sends the list as it is; the server parses it (100,000 rows would freeze the page here).
 * `onProgress` gets 0-100 of the bytes sent; after 100 the server is still parsing.
 */
export function uploadSmsBatch(
  projectId: string,
  input: { file: File; signatureId: string; templateId: string },
  onProgress?: (percent: number) => void,
): Promise<SmsBatchPreview> {
  const form = new FormData();
  form.append('file', input.file, input.file.name);
  return postForm<SmsBatchPreview>(smsUrl(projectId, '/batches/uploads'), form, {
    params: { signatureId: input.signatureId, templateId: input.templateId },
    showError: false,
    // A 20 MB sheet on a slow line and its parse take longer than the default minute.
    timeout: 10 * 60_000,
    onUploadProgress: (event) => {
      const percent = event.total ? (event.loaded / event.total) * 100 : 0;
      onProgress?.(Math.min(100, Math.round(percent)));
    },
  });
}
