import { useMutation, useQueryClient } from '@tanstack/react-query';
import { post, type RequestOptions } from '@/lib/request';
import { type SmsReviewKind, smsKeys, smsReviewUrl } from './sms-query-keys';

/**
 * 提交审核. The server refuses a signature without its proof and a template that breaks a rule
 * ("模板未通过检查：…"); the refusal is the user's to read, so it toasts unless the caller shows it.
 */
export function submitSmsReview(
  projectId: string,
  kind: SmsReviewKind,
  id: string,
  options: RequestOptions = {},
): Promise<unknown> {
  return post(smsReviewUrl(projectId, kind, id, '/submit'), undefined, options);
}

export function useSubmitSmsReview(projectId: string, kind: SmsReviewKind, options: RequestOptions = {}) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => submitSmsReview(projectId, kind, id, options),
    // A refused submission may still follow a save the list must show.
    onSettled: () => queryClient.invalidateQueries({ queryKey: smsKeys.lists(projectId, kind) }),
  });
}
