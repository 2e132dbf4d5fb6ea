import { projectUrl } from '@/lib/api/project-url';

export type SmsRuleOwner = { ownerType: 'assistant' | 'task'; ownerId: string };

export const smsFollowUpRulesUrl = (projectId: string, ruleId?: string) =>
  projectUrl(projectId, `/sms/follow-up-rules${ruleId ? `/${encodeURIComponent(ruleId)}` : ''}`);

export const smsFollowUpKeys = {
  rules: (projectId: string, owner: SmsRuleOwner) =>
    ['projects', projectId, 'sms', 'follow-up-rules', owner.ownerType, owner.ownerId] as const,
  /** Under the SMS section's own key root, so its writes (an approval) refresh these too. */
  approved: (projectId: string, kind: 'signatures' | 'templates') =>
    ['projects', projectId, 'sms', kind, 'approved'] as const,
};
