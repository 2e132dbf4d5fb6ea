import { useEffect } from 'react';
import { useBalanceLimit } from '@/lib/api/get-balance-limit';
import { useCurrentUser } from '@/lib/api/get-current-user';
import { type UserInfo, useUserStore } from '@/stores/user-store';

/**
 * The shell's login check: the current user fills user-store (a failure means not logged in; the
 * request client's 401 flow takes the visitor to /login), then the project's balance limits load.
 */
export function useShellSession(): { isLogin: boolean } {
  const currentUser = useCurrentUser();
  const setUserInfo = useUserStore((state) => state.setUserInfo);
  const user = currentUser.data;

  useEffect(() => {
    if (user) setUserInfo(user as UserInfo);
  }, [user, setUserInfo]);

  const isLogin = currentUser.isSuccess;
  useBalanceLimit(isLogin ? user?.projects[0]?.id : undefined);
  return { isLogin };
}
