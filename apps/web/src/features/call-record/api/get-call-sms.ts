import type { SmsMessageList } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';

/** The few SMS a call triggers (follow-up rules, the assistant's or the flow's send). */
export const CALL_SMS_SHOWN = 5;

export function getCallSms(projectId: string, callId: string): Promise<SmsMessageList> {
  return get<SmsMessageList>(projectUrl(projectId, '/sms/messages'), {
    params: { callId, pageSize: CALL_SMS_SHOWN },
    // A side card: when it cannot load, the call detail stays as it is, without a toast.
    showError: false,
  });
}

export function useCallSms(projectId: string, callId: string) {
  return useQuery({
    queryKey: ['projects', projectId, 'sms', 'messages', 'list', { callId, pageSize: CALL_SMS_SHOWN }],
    queryFn: () => getCallSms(projectId, callId),
    enabled: Boolean(projectId && callId),
  });
}
