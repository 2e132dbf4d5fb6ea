import type { SmsFollowUpRule, SmsFollowUpRuleWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, put } from '@/lib/request';
import { smsFollowUpKeys, smsFollowUpRulesUrl } from './sms-follow-up-query-keys';

export type SaveSmsFollowUpRule = { id?: string; body: SmsFollowUpRuleWriteRequest };

export function saveSmsFollowUpRule(projectId: string, { id, body }: SaveSmsFollowUpRule) {
  // The dialog shows a refusal beside the form.
  return id
    ? put<SmsFollowUpRule>(smsFollowUpRulesUrl(projectId, id), body, { showError: false })
    : post<SmsFollowUpRule>(smsFollowUpRulesUrl(projectId), body, { showError: false });
}

export function useSaveSmsFollowUpRule(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (input: SaveSmsFollowUpRule) => saveSmsFollowUpRule(projectId, input),
    onSuccess: (_rule, { body }) =>
      queryClient.invalidateQueries({ queryKey: smsFollowUpKeys.rules(projectId, body) }),
  });
}
