import type { FlowTestCallRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowUrl } from './flow-keys';

/**
 * 模拟来电: the stored draft answers a simulated caller on the simulated carrier, end to end like a
 * real inbound call; it is recorded as a test call (no version). Answers at once with the call's id.
 */
export function startFlowTestCall(
  projectId: string,
  flowId: string,
  body: FlowTestCallRequest,
): Promise<{ callId: string }> {
  return post<{ callId: string }>(flowUrl(projectId, flowId, '/test-call'), body);
}

export function useStartFlowTestCall(projectId: string, flowId: string) {
  return useMutation({
    mutationFn: (body: FlowTestCallRequest) => startFlowTestCall(projectId, flowId, body),
  });
}
