import { useUserStore } from '@/stores/user-store';
import { useReviewSettings } from './reviews';

/**
 * True when this user's 发布 becomes 提交审核: the project reviews first and the user is not an
 * owner or admin (the server refuses their publish then).
 */
export function useReviewFirst(projectId: string | undefined): boolean {
  const manager = useUserStore((state) => state.userInfo.isOwnerOrAdmin);
  // An owner or admin publishes directly whatever the switch says: no need to ask.
  const settings = useReviewSettings(projectId, { enabled: !manager });
  return Boolean(settings.data?.required) && !manager;
}
