import type { TestCallRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { post } from '@/lib/request';

/** Places a 模拟通话 on the simulated carrier; it runs in real time on the server. */
export function startTestCall(projectId: string, body: TestCallRequest): Promise<{ callId: string }> {
  return post<{ callId: string }>(projectUrl(projectId, '/calls/test'), body);
}

export function useStartTestCall(projectId: string) {
  return useMutation({ mutationFn: (body: TestCallRequest) => startTestCall(projectId, body) });
}
