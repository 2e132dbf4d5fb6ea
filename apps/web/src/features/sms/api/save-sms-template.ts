import type { SmsTemplate, SmsTemplateWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { smsKeys, smsReviewUrl } from './sms-query-keys';

export type SaveSmsTemplate = { id?: string; body: SmsTemplateWriteRequest };

/** Creates the template, or saves an edit of one (which puts it back to 待提交). */
export function saveSmsTemplate(projectId: string, { id, body }: SaveSmsTemplate): Promise<SmsTemplate> {
  // The editor shows a refusal next to the form itself.
  return id
    ? put<SmsTemplate>(smsReviewUrl(projectId, 'templates', id), body, { showError: false })
    : post<SmsTemplate>(smsReviewUrl(projectId, 'templates'), body, { showError: false });
}

export function useSaveSmsTemplate(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: SaveSmsTemplate) => saveSmsTemplate(projectId, input),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsKeys.lists(projectId, 'templates') }),
  });
}
