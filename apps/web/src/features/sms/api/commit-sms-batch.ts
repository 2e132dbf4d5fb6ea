import type { SmsBatch, SmsBatchMapping } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { smsKeys, smsUrl } from './sms-query-keys';

export function commitSmsBatch(
  projectId: string,
  uploadId: string,
  mapping: SmsBatchMapping,
): Promise<SmsBatch> {
  return post<SmsBatch>(
    smsUrl(projectId, `/batches/uploads/${encodeURIComponent(uploadId)}/commit`),
    { mapping },
    // 100,000 rows are checked and queued in one go: longer than the default minute on a slow server.
    { showError: false, timeout: 5 * 60_000 },
  );
}

export function useCommitSmsBatch(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ uploadId, mapping }: { uploadId: string; mapping: SmsBatchMapping }) =>
      commitSmsBatch(projectId, uploadId, mapping),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsKeys.batches(projectId) }),
  });
}
