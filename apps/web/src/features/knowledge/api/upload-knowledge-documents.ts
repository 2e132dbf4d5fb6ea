import { KNOWLEDGE_MAX_FILES_PER_UPLOAD, type KnowledgeUploadResult } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { postForm } from '@/lib/request';
import { knowledgeBasesUrl, knowledgeKeys } from './knowledge-query-keys';

export type UploadKnowledgeDocuments = {
  files: File[];
  /** 0-100 over all the bytes of this upload. */
  onProgress?: (percent: number) => void;
};

/**
 * Sends the files in batches of the server's per-request maximum and merges the answers, so a
 * user who drops 25 files gets one result.
 */
export async function uploadKnowledgeDocuments(
  projectId: string,
  knowledgeBaseId: string,
  { files, onProgress }: UploadKnowledgeDocuments,
): Promise<KnowledgeUploadResult> {
  const result: KnowledgeUploadResult = { accepted: [], rejected: [] };
  const totalBytes = files.reduce((sum, file) => sum + file.size, 0) || 1;
  let sentBytes = 0;
  for (let start = 0; start < files.length; start += KNOWLEDGE_MAX_FILES_PER_UPLOAD) {
    const batch = files.slice(start, start + KNOWLEDGE_MAX_FILES_PER_UPLOAD);
    const batchBytes = batch.reduce((sum, file) => sum + file.size, 0);
    const form = new FormData();
    for (const file of batch) form.append('file', file, file.name);
    const answer = await postForm<KnowledgeUploadResult>(
      `${knowledgeBasesUrl(projectId, knowledgeBaseId)}/documents`,
      form,
      {
        // Large files on a slow line take longer than the default minute.
        timeout: 10 * 60_000,
        onUploadProgress: (event) => {
          const loaded = event.total ? (event.loaded / event.total) * batchBytes : event.loaded;
          onProgress?.(Math.min(99, Math.round(((sentBytes + loaded) / totalBytes) * 100)));
        },
      },
    );
    sentBytes += batchBytes;
    result.accepted.push(...answer.accepted);
    result.rejected.push(...answer.rejected);
  }
  onProgress?.(100);
  return result;
}

export function useUploadKnowledgeDocuments(projectId: string, knowledgeBaseId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: UploadKnowledgeDocuments) =>
      uploadKnowledgeDocuments(projectId, knowledgeBaseId, input),
    // Even a partly failed batch may have queued files; the table and counts must show them.
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.base(projectId, knowledgeBaseId) }),
        queryClient.invalidateQueries({ queryKey: knowledgeKeys.lists(projectId) }),
      ]),
  });
}
