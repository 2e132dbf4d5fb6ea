import type { TestCallRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';

/** Places a 模拟通话 on the simulated carrier; it runs in real time on the server. */
export function startTestCall(projectId: string, body: TestCallRequest): Promise<{ callId: string }> {
  return post<{ callId: string }>(projectUrl(projectId, '/calls/test'), body);
}

export function useStartTestCall(projectId: string) {
  return useMutation({ mutationFn: (body: TestCallRequest) => startTestCall(projectId, body) });
}

/** 挂断: the simulated callee hangs up (or the call is cancelled while it still rings). */
export function hangUpTestCall(projectId: string, callId: string): Promise<{ hungUp: boolean }> {
  return post<{ hungUp: boolean }>(projectUrl(projectId, `/calls/${encodeURIComponent(callId)}/hangup`));
}

export function useHangUpTestCall(projectId: string) {
  return useMutation({ mutationFn: (callId: string) => hangUpTestCall(projectId, callId) });
}
