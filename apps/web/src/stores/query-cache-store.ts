import { create } from 'zustand';
import { createJSONStorage, persist } from 'zustand/middleware';

export const QUERY_CACHE_STORE_KEY = 'query-cache-store';

/** The list pages whose filters survive a trip to a detail page and back. */
export type ListCacheKey = 'callRecordQueryCache' | 'callTaskQueryCache';

type QueryCacheState = {
  // Serialised entries: a string that fails to parse is dropped instead of crashing the list.
  callRecordQueryCache: string | null;
  callTaskQueryCache: string | null;
  /** Where the call detail page's back button returns to. */
  callDetailBackUrl: string | null;
  setQueryCache: (key: ListCacheKey, value: string | null) => void;
  setCallDetailBackUrl: (url: string | null) => void;
};

export const useQueryCacheStore = create<QueryCacheState>()(
  persist(
    (set) => ({
      callRecordQueryCache: null,
      callTaskQueryCache: null,
      callDetailBackUrl: null,
      setQueryCache: (key, value) => set({ [key]: value } as Pick<QueryCacheState, ListCacheKey>),
      setCallDetailBackUrl: (callDetailBackUrl) => set({ callDetailBackUrl }),
    }),
    {
      name: QUERY_CACHE_STORE_KEY,
      version: 0,
      storage: createJSONStorage(() => localStorage),
      partialize: ({ callRecordQueryCache, callTaskQueryCache, callDetailBackUrl }) => ({
        callRecordQueryCache,
        callTaskQueryCache,
        callDetailBackUrl,
      }),
    },
  ),
);
