import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { callUrl } from './call-query-keys';

/** 挂断 a simulated call (模拟通话, 模拟来电): the simulated party hangs up, or a ringing call is cancelled. */
export function hangUpCall(projectId: string, callId: string): Promise<{ hungUp: boolean }> {
  return post<{ hungUp: boolean }>(callUrl(projectId, callId, '/hangup'));
}

export function useHangUpCall(projectId: string) {
  return useMutation({ mutationFn: (callId: string) => hangUpCall(projectId, callId) });
}
