import { act, render } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type ListCacheKey, useQueryCacheStore } from '@/stores/query-cache-store';
import { LIST_CACHE_TTL_MS, parseListCache, toCachedDateRange, useListCache } from '../list-cache';

type Filters = { keyword: string; range?: { from: string; to: string } };

const NOW = new Date('2026-03-01T10:00:00Z').getTime();

let captured: ReturnType<typeof useListCache<Filters>> | undefined;

function ListPage({ pageKey }: { pageKey: ListCacheKey }) {
  captured = useListCache<Filters>(pageKey);
  return null;
}

/**
 * Opens `/list` either as the router's first entry (a POP, like a back navigation) or by a
 * PUSH from another page, like following a menu link.
 */
async function openList(pageKey: ListCacheKey, search: string, how: 'pop' | 'push') {
  const router = createMemoryRouter(
    [
      { path: '/start', element: null },
      { path: '/list', element: <ListPage pageKey={pageKey} /> },
    ],
    { initialEntries: [how === 'pop' ? `/list${search}` : '/start'] },
  );
  render(<RouterProvider router={router} />);
  if (how === 'push') await act(() => router.navigate(`/list${search}`));
  return captured;
}

beforeEach(() => {
  vi.useFakeTimers({ now: NOW });
  useQueryCacheStore.setState({
    callRecordQueryCache: null,
    callTaskQueryCache: null,
    callDetailBackUrl: null,
  });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('parseListCache', () => {
  const entry = { filters: { keyword: 'a' }, page: 3, timestamp: NOW };

  it('reads a fresh entry', () => {
    expect(parseListCache(JSON.stringify(entry), NOW + 1000)).toEqual(entry);
  });

  it('expires after 30 minutes', () => {
    expect(LIST_CACHE_TTL_MS).toBe(30 * 60 * 1000);
    expect(parseListCache(JSON.stringify(entry), NOW + LIST_CACHE_TTL_MS)).toEqual(entry);
    expect(parseListCache(JSON.stringify(entry), NOW + LIST_CACHE_TTL_MS + 1)).toBeNull();
  });

  it.each(['{not json', '"text"', 'null', '{"filters":{},"page":"2","timestamp":1}'])(
    'rejects an unparseable entry %s',
    (raw) => {
      expect(parseListCache(raw, NOW)).toBeNull();
    },
  );
});

describe('toCachedDateRange', () => {
  it('stores a complete range as ISO from/to strings', () => {
    const range = [new Date('2026-01-01T00:00:00Z'), new Date('2026-01-31T00:00:00Z')] as const;
    expect(toCachedDateRange(range)).toEqual({
      from: '2026-01-01T00:00:00.000Z',
      to: '2026-01-31T00:00:00.000Z',
    });
    expect(toCachedDateRange([range[0], null])).toBeUndefined();
    expect(toCachedDateRange(null)).toBeUndefined();
  });
});

describe('useListCache', () => {
  const filters: Filters = {
    keyword: '张三',
    range: { from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z' },
  };

  it('saves filters, page and a timestamp into query-cache-store', async () => {
    const cache = await openList('callRecordQueryCache', '', 'push');

    cache?.save(filters, 4);

    const raw = useQueryCacheStore.getState().callRecordQueryCache;
    expect(JSON.parse(raw ?? '')).toEqual({ filters, page: 4, timestamp: NOW });
  });

  it('restores on ?back=1', async () => {
    useQueryCacheStore
      .getState()
      .setQueryCache('callTaskQueryCache', JSON.stringify({ filters, page: 2, timestamp: NOW }));

    const cache = await openList('callTaskQueryCache', '?back=1', 'push');

    expect(cache?.restored).toEqual({ filters, page: 2 });
  });

  it('restores on a back (POP) navigation', async () => {
    useQueryCacheStore
      .getState()
      .setQueryCache('callTaskQueryCache', JSON.stringify({ filters, page: 2, timestamp: NOW }));

    const cache = await openList('callTaskQueryCache', '', 'pop');

    expect(cache?.restored).toEqual({ filters, page: 2 });
  });

  it('does not restore when the list is opened afresh', async () => {
    useQueryCacheStore
      .getState()
      .setQueryCache('callTaskQueryCache', JSON.stringify({ filters, page: 2, timestamp: NOW }));

    const cache = await openList('callTaskQueryCache', '', 'push');

    expect(cache?.restored).toBeNull();
  });

  it('drops an expired entry', async () => {
    const old = NOW - LIST_CACHE_TTL_MS - 1;
    useQueryCacheStore
      .getState()
      .setQueryCache('callRecordQueryCache', JSON.stringify({ filters, page: 2, timestamp: old }));

    const cache = await openList('callRecordQueryCache', '?back=1', 'pop');

    expect(cache?.restored).toBeNull();
    expect(useQueryCacheStore.getState().callRecordQueryCache).toBeNull();
  });

  it('drops an entry that cannot be parsed', async () => {
    useQueryCacheStore.getState().setQueryCache('callRecordQueryCache', '{broken');

    const cache = await openList('callRecordQueryCache', '?back=1', 'pop');

    expect(cache?.restored).toBeNull();
    expect(useQueryCacheStore.getState().callRecordQueryCache).toBeNull();
  });
});
