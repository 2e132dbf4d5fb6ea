import type { SmsOptOut } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { smsKeys, smsUrl } from './sms-query-keys';

export function addSmsOptOut(projectId: string, phone: string): Promise<SmsOptOut> {
  // The dialog shows a refusal (not a mobile number) next to the field.
  return post<SmsOptOut>(smsUrl(projectId, '/opt-outs'), { phone }, { showError: false });
}

export function useAddSmsOptOut(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (phone: string) => addSmsOptOut(projectId, phone),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsKeys.optOuts(projectId) }),
  });
}
