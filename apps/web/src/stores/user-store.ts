import type { ProjectRole } from '@callpilot/contracts';
import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';

export type UserProject = {
  id: string;
  disabled: boolean;
  [field: string]: unknown;
};

export type UserInfo = {
  isOwnerOrAdmin: boolean;
  id: string;
  email: string;
  displayName: string;
  profile: string;
  projects: UserProject[];
  /** The role in the current project; absent in a store persisted before roles were sent. */
  role?: ProjectRole | null;
};

export const USER_STORE_KEY = 'user-store';

export const EMPTY_USER_INFO: UserInfo = {
  isOwnerOrAdmin: false,
  id: '',
  email: '',
  displayName: '',
  profile: '',
  projects: [],
};

type UserState = {
  userInfo: UserInfo;
  /** Replaces the whole user info: a partial update would keep a previous user's projects. */
  setUserInfo: (userInfo: UserInfo) => void;
};

export const useUserStore = create<UserState>()(
  persist(
    (set) => ({
      userInfo: EMPTY_USER_INFO,
      setUserInfo: (userInfo) => set({ userInfo }),
    }),
    { name: USER_STORE_KEY, version: 0, storage: createJSONStorage(() => localStorage) },
  ),
);

/** The spec's current project: the first project of the user, if any. */
export function selectCurrentProjectId(state: Pick<UserState, 'userInfo'>): string | undefined {
  return state.userInfo.projects[0]?.id;
}
