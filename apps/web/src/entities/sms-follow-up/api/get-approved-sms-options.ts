import type { Paged, SmsSignature, SmsTemplate } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get } from '@/lib/request';
import { smsFollowUpKeys } from './sms-follow-up-query-keys';

/** A rule picks from what may send: the project's 已通过 ones (a project has few; 100 is the page cap). */
const APPROVED = { status: 'approved', page: 1, pageSize: 100 } as const;

export function useApprovedSmsSignatures(projectId: string, enabled = true) {
  return useQuery({
    queryKey: smsFollowUpKeys.approved(projectId, 'signatures'),
    queryFn: () => get<Paged<SmsSignature>>(projectUrl(projectId, '/sms/signatures'), { params: APPROVED }),
    enabled: Boolean(projectId) && enabled,
  });
}

export function useApprovedSmsTemplates(projectId: string, enabled = true) {
  return useQuery({
    queryKey: smsFollowUpKeys.approved(projectId, 'templates'),
    queryFn: () => get<Paged<SmsTemplate>>(projectUrl(projectId, '/sms/templates'), { params: APPROVED }),
    enabled: Boolean(projectId) && enabled,
  });
}
