import type { SmsMessage, SmsSendRequest } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { smsUrl } from './sms-query-keys';

/**
 * One SMS. The server answers with the record even when it does not send (blocked: do-not-disturb or
 * the daily cap; waiting: 推广 outside 08:00–20:00), so the page shows what happened rather than an error.
 */
export function sendSmsMessage(projectId: string, body: SmsSendRequest): Promise<SmsMessage> {
  // A refusal (template not approved, a variable missing) is shown next to the form.
  return post<SmsMessage>(smsUrl(projectId, '/messages'), body, { showError: false });
}

export function useSendSmsMessage(projectId: string) {
  return useMutation({ mutationFn: (body: SmsSendRequest) => sendSmsMessage(projectId, body) });
}
