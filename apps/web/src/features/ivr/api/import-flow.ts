import type { FlowDetail } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowKeys, flowsUrl, invalidateFlowLists } from './flow-keys';

/** A chosen file that is not a flow export at all, caught before anything is sent. */
export class FlowFileError extends Error {}

/** The JSON a chosen file holds; the server checks that it is a flow export and names any bad field. */
export async function readFlowFile(file: Blob & { name?: string }): Promise<unknown> {
  const text = await file.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new FlowFileError(
      `「${file.name ?? '所选文件'}」不是有效的 JSON 文件，请选择通话流程导出的 .flow.json 文件`,
    );
  }
}

/** A new flow from an export file; on 400 (the field path named by the server) nothing is created. */
export function importFlow(projectId: string, body: unknown): Promise<FlowDetail> {
  return post<FlowDetail>(flowsUrl(projectId, '/import'), body);
}

export function useImportFlow(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: async (file: Blob & { name?: string }) => importFlow(projectId, await readFlowFile(file)),
    onSuccess: (created) => {
      queryClient.setQueryData(flowKeys.detail(projectId, created.id), created);
      return invalidateFlowLists(queryClient, projectId);
    },
  });
}
