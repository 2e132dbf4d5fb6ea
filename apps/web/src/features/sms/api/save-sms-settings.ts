import type { SmsSettingsUpdateRequest, SmsSettingsView } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { smsKeys, smsUrl } from './sms-query-keys';

/** Saves the provider; a secret left out keeps the stored one. */
export function saveSmsSettings(projectId: string, body: SmsSettingsUpdateRequest): Promise<SmsSettingsView> {
  return put<SmsSettingsView>(smsUrl(projectId, '/settings'), body, { showError: false });
}

export function useSaveSmsSettings(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: SmsSettingsUpdateRequest) => saveSmsSettings(projectId, body),
    onSuccess: (saved) => queryClient.setQueryData(smsKeys.settings(projectId), saved),
  });
}
