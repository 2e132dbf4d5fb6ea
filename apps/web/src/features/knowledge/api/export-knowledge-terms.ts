import { useMutation } from '@tanstack/react-query';
import { type DownloadedFile, getBlob, saveBlob } from '@/lib/request';
import { knowledgeTermsUrl } from './knowledge-terms-keys';

export type KnowledgeTermExportFormat = 'csv' | 'xlsx';

export function exportKnowledgeTerms(
  projectId: string,
  format: KnowledgeTermExportFormat,
): Promise<DownloadedFile> {
  return getBlob(`${knowledgeTermsUrl(projectId)}/export`, { params: { format } });
}

export function useExportKnowledgeTerms(projectId: string) {
  return useMutation({
    mutationFn: async (format: KnowledgeTermExportFormat) => {
      const { blob, fileName } = await exportKnowledgeTerms(projectId, format);
      saveBlob(blob, fileName ?? `口语词典.${format}`);
    },
  });
}
