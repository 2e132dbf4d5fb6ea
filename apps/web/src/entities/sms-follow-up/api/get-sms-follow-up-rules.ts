import type { SmsFollowUpRule } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { type SmsRuleOwner, smsFollowUpKeys, smsFollowUpRulesUrl } from './sms-follow-up-query-keys';

export function getSmsFollowUpRules(projectId: string, owner: SmsRuleOwner): Promise<SmsFollowUpRule[]> {
  return get<SmsFollowUpRule[]>(smsFollowUpRulesUrl(projectId), { params: owner });
}

export const smsFollowUpRulesQueryOptions = (projectId: string, owner: SmsRuleOwner) =>
  queryOptions({
    queryKey: smsFollowUpKeys.rules(projectId, owner),
    queryFn: () => getSmsFollowUpRules(projectId, owner),
  });

export function useSmsFollowUpRules(projectId: string, owner: SmsRuleOwner) {
  return useQuery({ ...smsFollowUpRulesQueryOptions(projectId, owner), enabled: Boolean(projectId) });
}
