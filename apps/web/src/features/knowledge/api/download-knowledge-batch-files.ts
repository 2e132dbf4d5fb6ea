import { useMutation } from '@tanstack/react-query';
import { getBlob, saveBlob } from '@/lib/request';
import { batchTestsUrl } from './get-knowledge-batch-tests';

export const BATCH_TEMPLATE_FILE_NAME = '批量测试模板.csv';

/** The sample question list; downloaded (not a plain link) because the API needs the bearer token. */
export function useDownloadBatchTemplate(projectId: string, knowledgeBaseId: string) {
  return useMutation({
    mutationFn: async () => {
      const { blob, fileName } = await getBlob(`${batchTestsUrl(projectId, knowledgeBaseId)}/template.csv`);
      saveBlob(blob, fileName ?? BATCH_TEMPLATE_FILE_NAME);
    },
  });
}

/** The rows of an upload that were left out, with the reason, to fix and upload again. */
export function useDownloadSkippedRows(projectId: string, knowledgeBaseId: string) {
  return useMutation({
    mutationFn: async (testId: string) => {
      const { blob, fileName } = await getBlob(
        `${batchTestsUrl(projectId, knowledgeBaseId)}/${encodeURIComponent(testId)}/skipped.csv`,
      );
      saveBlob(blob, fileName ?? '跳过的行.csv');
    },
  });
}
