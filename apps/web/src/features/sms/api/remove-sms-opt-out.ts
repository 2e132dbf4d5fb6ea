import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { smsKeys, smsUrl } from './sms-query-keys';

export function removeSmsOptOut(projectId: string, phone: string): Promise<void> {
  return del<void>(smsUrl(projectId, `/opt-outs/${encodeURIComponent(phone)}`));
}

export function useRemoveSmsOptOut(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (phone: string) => removeSmsOptOut(projectId, phone),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: smsKeys.optOuts(projectId) }),
  });
}
