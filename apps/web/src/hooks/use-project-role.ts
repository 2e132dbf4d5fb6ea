import { canManageProject, canWrite, type ProjectRole } from '@callpilot/contracts';
import { useUserStore } from '@/stores/user-store';

/** The user's role in the current project, or null before the user is known. */
export function useProjectRole(): ProjectRole | null {
  return useUserStore(
    (state) => state.userInfo.role ?? (state.userInfo.projects[0]?.role as ProjectRole) ?? null,
  );
}

/**
 * Whether to show write actions (新建/编辑/删除/启动). Only hides: the server refuses a read-only
 * member's writes whatever the console shows, so an unknown role shows them.
 */
export function useCanWrite(): boolean {
  const role = useProjectRole();
  return role === null || canWrite(role);
}

/** Members, trunks, keys, webhooks, providers: owner and admin. */
export function useCanManageProject(): boolean {
  const role = useProjectRole();
  return role !== null && canManageProject(role);
}
