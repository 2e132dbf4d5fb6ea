import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { type SmsReviewKind, smsKeys, smsReviewUrl } from './sms-query-keys';

export function deleteSmsReviewItem(projectId: string, kind: SmsReviewKind, id: string): Promise<unknown> {
  return del(smsReviewUrl(projectId, kind, id));
}

export function useDeleteSmsReviewItem(projectId: string, kind: SmsReviewKind) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => deleteSmsReviewItem(projectId, kind, id),
    onSettled: () => queryClient.invalidateQueries({ queryKey: smsKeys.lists(projectId, kind) }),
  });
}
