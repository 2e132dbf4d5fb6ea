import type { TestInboundCallRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { callsUrl } from './call-query-keys';

/**
 * 模拟来电: a simulated caller dials one of the project's numbers and the call is routed as a real
 * inbound call (the number's binding, the project's concurrentCallin). Answers at once with the id.
 */
export function startTestInboundCall(
  projectId: string,
  body: TestInboundCallRequest,
): Promise<{ callId: string }> {
  return post<{ callId: string }>(callsUrl(projectId, '/test-inbound'), body);
}

export function useStartTestInboundCall(projectId: string) {
  return useMutation({ mutationFn: (body: TestInboundCallRequest) => startTestInboundCall(projectId, body) });
}
