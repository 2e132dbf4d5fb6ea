import { useMutation } from '@tanstack/react-query';
import { type DownloadedFile, getBlob, saveBlob } from '@/lib/request';
import { knowledgeBasesUrl } from './knowledge-query-keys';

export type KnowledgeExportFormat = 'md' | 'csv' | 'xlsx';

export function exportKnowledgeBase(
  projectId: string,
  knowledgeBaseId: string,
  format: KnowledgeExportFormat,
): Promise<DownloadedFile> {
  return getBlob(`${knowledgeBasesUrl(projectId, knowledgeBaseId)}/export`, { params: { format } });
}

/** Downloads the export and saves it, named by the server or else after the base. */
export function useExportKnowledgeBase(projectId: string, knowledgeBaseId: string, baseName: string) {
  return useMutation({
    mutationFn: async (format: KnowledgeExportFormat) => {
      const { blob, fileName } = await exportKnowledgeBase(projectId, knowledgeBaseId, format);
      saveBlob(blob, fileName ?? `${baseName}.${format}`);
    },
  });
}
