import type { ColumnMapping, ImportPreview } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import dayjs from 'dayjs';
import { getBlob, post, postForm, saveBlob } from '@/lib/request';
import { importUrl, taskKeys, taskUrl } from './call-task-query-keys';

/** The contract's importResult (the web does not depend on zod to infer it). */
export type ImportResult = { added: number; invalid: number; duplicates: number; doNotCall: number };
export type ImportRejectKind = 'invalid' | 'duplicate' | 'do_not_call';
export type TemplateFormat = 'csv' | 'xlsx';

/**
 * Sends the sheet as it is; the server parses it (100,000 rows would freeze the page here).
 * `onProgress` gets 0-100 of the bytes sent; after 100 the server is still parsing.
 */
export function uploadTaskImport(
  projectId: string,
  taskId: string,
  file: File,
  onProgress?: (percent: number) => void,
): Promise<ImportPreview> {
  const form = new FormData();
  form.append('file', file, file.name);
  return postForm<ImportPreview>(taskUrl(projectId, taskId, '/imports'), form, {
    // A 20 MB sheet on a slow line and its parse take longer than the default minute.
    timeout: 10 * 60_000,
    onUploadProgress: (event) => {
      const percent = event.total ? (event.loaded / event.total) * 100 : 0;
      onProgress?.(Math.min(100, Math.round(percent)));
    },
  });
}

export function pasteTaskImport(projectId: string, taskId: string, text: string): Promise<ImportPreview> {
  return post<ImportPreview>(taskUrl(projectId, taskId, '/imports/paste'), { text });
}

/** Recounts the same upload with another column mapping. */
export function previewTaskImport(
  projectId: string,
  taskId: string,
  importId: string,
  mapping: ColumnMapping,
): Promise<ImportPreview> {
  return post<ImportPreview>(
    importUrl(projectId, taskId, importId, '/preview'),
    { mapping },
    { showLoading: false },
  );
}

export function commitTaskImport(
  projectId: string,
  taskId: string,
  importId: string,
  mapping: ColumnMapping,
): Promise<ImportResult> {
  return post<ImportResult>(importUrl(projectId, taskId, importId, '/commit'), { importId, mapping });
}

export function useCommitTaskImport(projectId: string, taskId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ importId, mapping }: { importId: string; mapping: ColumnMapping }) =>
      commitTaskImport(projectId, taskId, importId, mapping),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: taskKeys.task(projectId, taskId) }),
  });
}

const REJECT_FILE_NAMES: Record<ImportRejectKind, string> = {
  invalid: '号码无效',
  duplicate: '重复号码',
  do_not_call: '免打扰号码',
};

/** The rejected rows of one kind as CSV, fetched with the token (a plain link could not send it). */
export async function downloadImportRejects(
  projectId: string,
  taskId: string,
  importId: string,
  kind: ImportRejectKind,
): Promise<void> {
  const { blob, fileName } = await getBlob(importUrl(projectId, taskId, importId, '/rejects'), {
    params: { kind },
  });
  saveBlob(blob, fileName ?? `${REJECT_FILE_NAMES[kind]}-${dayjs().format('YYYYMMDD-HHmmss')}.csv`);
}

export async function downloadImportTemplate(
  projectId: string,
  taskId: string,
  format: TemplateFormat,
): Promise<void> {
  const { blob, fileName } = await getBlob(taskUrl(projectId, taskId, '/import-template'), {
    params: { format },
  });
  saveBlob(blob, fileName ?? `联系人导入模板.${format}`);
}
