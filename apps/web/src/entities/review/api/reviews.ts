import type {
  Paged,
  PublishReviewDetail,
  PublishReviewSummary,
  ReviewKind,
  ReviewSettings,
  ReviewStatus,
} from '@callpilot/contracts';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { projectUrl } from '@/lib/api/project-url';
import { get, post, put } from '@/lib/request';

export const reviewKeys = {
  all: (projectId: string) => ['projects', projectId, 'reviews'] as const,
  settings: (projectId: string) => ['projects', projectId, 'reviews', 'settings'] as const,
  list: (projectId: string, query: ReviewQuery) => ['projects', projectId, 'reviews', 'list', query] as const,
  detail: (projectId: string, id: string) => ['projects', projectId, 'reviews', 'detail', id] as const,
};

export interface ReviewQuery {
  page: number;
  pageSize: number;
  status?: ReviewStatus;
  kind?: ReviewKind;
  targetId?: string;
}

const searchOf = (query: ReviewQuery) => {
  const params = new URLSearchParams({ page: String(query.page), pageSize: String(query.pageSize) });
  if (query.status) params.set('status', query.status);
  if (query.kind) params.set('kind', query.kind);
  if (query.targetId) params.set('targetId', query.targetId);
  return params.toString();
};

export function useReviewSettings(projectId: string | undefined, options: { enabled?: boolean } = {}) {
  return useQuery({
    queryKey: reviewKeys.settings(projectId ?? ''),
    queryFn: () => get<ReviewSettings>(projectUrl(projectId ?? '', '/review-settings')),
    enabled: Boolean(projectId) && options.enabled !== false,
  });
}

export function useSetReviewSettings(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: ReviewSettings) =>
      put<ReviewSettings>(projectUrl(projectId, '/review-settings'), body),
    onSuccess: (data) => queryClient.setQueryData(reviewKeys.settings(projectId), data),
  });
}

export function useReviews(projectId: string | undefined, query: ReviewQuery, enabled = true) {
  return useQuery({
    queryKey: reviewKeys.list(projectId ?? '', query),
    queryFn: () =>
      get<Paged<PublishReviewSummary>>(projectUrl(projectId ?? '', `/reviews?${searchOf(query)}`)),
    enabled: Boolean(projectId) && enabled,
    placeholderData: keepPreviousData,
  });
}

export function useReview(projectId: string, reviewId: string | null) {
  return useQuery({
    queryKey: reviewKeys.detail(projectId, reviewId ?? ''),
    queryFn: () =>
      get<PublishReviewDetail>(projectUrl(projectId, `/reviews/${encodeURIComponent(reviewId ?? '')}`)),
    enabled: Boolean(reviewId),
  });
}

/** The one pending submission of an assistant or flow, so its editor can say 审核中. */
export function usePendingReview(
  projectId: string | undefined,
  kind: ReviewKind,
  targetId: string | undefined,
) {
  const reviews = useReviews(
    projectId,
    { page: 1, pageSize: 1, status: 'pending', kind, targetId },
    Boolean(targetId),
  );
  return reviews.data?.items[0] ?? null;
}

/** Every review query and what a decision publishes (the caller names those keys). */
function useInvalidating(projectId: string, also: readonly (readonly unknown[])[] = []) {
  const queryClient = useQueryClient();
  return () =>
    Promise.all([
      queryClient.invalidateQueries({ queryKey: reviewKeys.all(projectId) }),
      ...also.map((queryKey) => queryClient.invalidateQueries({ queryKey })),
    ]);
}

export function useSubmitReview(projectId: string) {
  const invalidate = useInvalidating(projectId);
  return useMutation({
    mutationFn: (body: { kind: ReviewKind; targetId: string; note: string }) =>
      post<PublishReviewSummary>(projectUrl(projectId, '/reviews'), body),
    onSuccess: invalidate,
  });
}

export function useDecideReview(projectId: string) {
  // Approving publishes: the assistants' and flows' lists, details and versions change too.
  // (The assistant and flow features key their queries under these prefixes.)
  const invalidate = useInvalidating(projectId, [
    ['projects', projectId, 'assistants'],
    ['projects', projectId, 'flows'],
  ]);
  return useMutation({
    mutationFn: ({
      id,
      decision,
      comment,
    }: {
      id: string;
      decision: 'approve' | 'reject' | 'withdraw';
      comment?: string;
    }) =>
      post<PublishReviewSummary>(
        projectUrl(projectId, `/reviews/${encodeURIComponent(id)}/${decision}`),
        decision === 'withdraw' ? undefined : { comment: comment ?? '' },
      ),
    onSuccess: invalidate,
  });
}
