import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { type SmsReviewKind, smsKeys, smsReviewUrl } from './sms-query-keys';

/** 撤回: takes a signature or template out of review, so it can be edited and submitted again. */
export function withdrawSmsReview(projectId: string, kind: SmsReviewKind, id: string): Promise<unknown> {
  return post(smsReviewUrl(projectId, kind, id, '/withdraw'));
}

export function useWithdrawSmsReview(projectId: string, kind: SmsReviewKind) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => withdrawSmsReview(projectId, kind, id),
    onSettled: () => queryClient.invalidateQueries({ queryKey: smsKeys.lists(projectId, kind) }),
  });
}
