import { beforeEach, describe, expect, it } from 'vitest';
import {
  appendHistoryPath,
  HISTORY_PATHS_KEY,
  SIDEBAR_COLLAPSED_KEY,
  SIDEBAR_SIZE_KEY,
  useHistoryStore,
  useSidebarStore,
} from '../local-values';
import { useOemStore } from '../oem-store';
import { useQueryCacheStore } from '../query-cache-store';
import { EMPTY_USER_INFO, selectCurrentProjectId, useUserStore } from '../user-store';

function stored(key: string): unknown {
  const raw = localStorage.getItem(key);
  return raw === null ? null : JSON.parse(raw);
}

const user = {
  isOwnerOrAdmin: true,
  id: 'u1',
  email: 'a@b.c',
  displayName: '王小明',
  profile: '',
  projects: [
    { id: 'p1', disabled: false },
    { id: 'p2', disabled: true },
  ],
};

beforeEach(() => {
  useUserStore.setState({ userInfo: EMPTY_USER_INFO });
  useHistoryStore.setState({ paths: [] });
});

describe('user-store', () => {
  it('starts with isOwnerOrAdmin false and no current project', () => {
    expect(useUserStore.getState().userInfo.isOwnerOrAdmin).toBe(false);
    expect(selectCurrentProjectId(useUserStore.getState())).toBeUndefined();
  });

  it('replaces the whole user info and persists it under user-store, version 0', () => {
    useUserStore.getState().setUserInfo(user);
    useUserStore
      .getState()
      .setUserInfo({ ...EMPTY_USER_INFO, id: 'u2', projects: [{ id: 'p9', disabled: false }] });

    expect(useUserStore.getState().userInfo).toEqual({
      ...EMPTY_USER_INFO,
      id: 'u2',
      projects: [{ id: 'p9', disabled: false }],
    });
    expect(selectCurrentProjectId(useUserStore.getState())).toBe('p9');
    expect(stored('user-store')).toMatchObject({ version: 0, state: { userInfo: { id: 'u2' } } });
  });

  it('takes the first project as the current project', () => {
    useUserStore.getState().setUserInfo(user);
    expect(selectCurrentProjectId(useUserStore.getState())).toBe('p1');
  });
});

describe('oem-store', () => {
  it('persists isOem, replaceName and replaceLogo under oem-store, version 0', () => {
    useOemStore.getState().setOem({ isOem: true, replaceName: '智呼', replaceLogo: 'https://x/logo.png' });

    expect(stored('oem-store')).toEqual({
      version: 0,
      state: { isOem: true, replaceName: '智呼', replaceLogo: 'https://x/logo.png' },
    });
  });
});

describe('query-cache-store', () => {
  it('persists both list caches and the detail back url under query-cache-store, version 0', () => {
    const store = useQueryCacheStore.getState();
    store.setQueryCache('callRecordQueryCache', '{"page":2}');
    store.setQueryCache('callTaskQueryCache', '{"page":3}');
    store.setCallDetailBackUrl('/call-record?back=1');

    expect(stored('query-cache-store')).toEqual({
      version: 0,
      state: {
        callRecordQueryCache: '{"page":2}',
        callTaskQueryCache: '{"page":3}',
        callDetailBackUrl: '/call-record?back=1',
      },
    });
  });
});

describe('sidebar keys', () => {
  it('stores the collapsed flag and size as bare values under their spec keys', () => {
    useSidebarStore.getState().setCollapsed(true);
    useSidebarStore.getState().setSize(12.5);

    expect(localStorage.getItem(SIDEBAR_COLLAPSED_KEY)).toBe('true');
    expect(localStorage.getItem(SIDEBAR_SIZE_KEY)).toBe('12.5');
    expect(SIDEBAR_COLLAPSED_KEY).toBe('sidebar-collapsed');
    expect(SIDEBAR_SIZE_KEY).toBe('sidebar-size');
  });
});

describe('historyPathArray', () => {
  it('keeps the last 10 paths, newest last, under historyPathArray', () => {
    for (let i = 1; i <= 12; i++) useHistoryStore.getState().pushPath(`/p${i}`);

    const expected = Array.from({ length: 10 }, (_, i) => `/p${i + 3}`);
    expect(useHistoryStore.getState().paths).toEqual(expected);
    expect(stored(HISTORY_PATHS_KEY)).toEqual(expected);
    expect(HISTORY_PATHS_KEY).toBe('historyPathArray');
  });

  it('does not record the same path twice in a row', () => {
    expect(appendHistoryPath(['/a', '/b'], '/b')).toEqual(['/a', '/b']);
    expect(appendHistoryPath(['/a', '/b'], '/a')).toEqual(['/a', '/b', '/a']);
  });
});
