import type { SmsSettingsView } from '@callpilot/contracts';
import { queryOptions, useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { smsKeys, smsUrl } from './sms-query-keys';

export function getSmsSettings(projectId: string): Promise<SmsSettingsView> {
  return get<SmsSettingsView>(smsUrl(projectId, '/settings'));
}

export const smsSettingsQueryOptions = (projectId: string) =>
  queryOptions({ queryKey: smsKeys.settings(projectId), queryFn: () => getSmsSettings(projectId) });

export function useSmsSettings(projectId: string | undefined) {
  return useQuery({ ...smsSettingsQueryOptions(projectId ?? ''), enabled: Boolean(projectId) });
}
