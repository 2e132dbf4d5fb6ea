import type { FlowExport } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { get, saveBlob } from '@/lib/request';
import { flowUrl } from './flow-keys';

export function exportFlow(projectId: string, flowId: string): Promise<FlowExport> {
  return get<FlowExport>(flowUrl(projectId, flowId, '/export'));
}

// Characters no file system accepts in a name; a flow named 「售后/投诉」 still saves.
const UNSAFE_FILE_NAME = /[\\/:*?"<>|\p{Cc}]/gu;

/** `<name>.flow.json`, the name made safe for any file system. */
export function flowExportFileName(name: string): string {
  const safe = name.replace(UNSAFE_FILE_NAME, '_').trim();
  return `${safe || '通话流程'}.flow.json`;
}

/** 导出: the flow's draft as the JSON file 导入 reads back (in this project or another). */
export function useExportFlow(projectId: string) {
  return useMutation({
    mutationFn: async (flowId: string) => {
      const file = await exportFlow(projectId, flowId);
      const json = `${JSON.stringify(file, null, 2)}\n`;
      saveBlob(new Blob([json], { type: 'application/json' }), flowExportFileName(file.name));
      return file;
    },
  });
}
