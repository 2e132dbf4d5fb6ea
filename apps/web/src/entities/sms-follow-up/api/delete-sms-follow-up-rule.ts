import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { type SmsRuleOwner, smsFollowUpKeys, smsFollowUpRulesUrl } from './sms-follow-up-query-keys';

export function deleteSmsFollowUpRule(projectId: string, ruleId: string) {
  return del<null>(smsFollowUpRulesUrl(projectId, ruleId));
}

export function useDeleteSmsFollowUpRule(projectId: string, owner: SmsRuleOwner) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (ruleId: string) => deleteSmsFollowUpRule(projectId, ruleId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsFollowUpKeys.rules(projectId, owner) }),
  });
}
