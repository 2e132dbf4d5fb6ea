import { useCallback, useMemo } from 'react';
import { useNavigationType, useSearchParams } from 'react-router';
import { type ListCacheKey, useQueryCacheStore } from '@/stores/query-cache-store';

/** The spec's default: a list left for longer than this opens fresh. */
export const LIST_CACHE_TTL_MS = 30 * 60 * 1000;

/** A date range as it is cached: ISO strings, since Dayjs and Date objects do not survive JSON. */
export type CachedDateRange = { from: string; to: string };

export type ListCacheEntry<F> = {
  filters: F;
  page: number;
  timestamp: number;
};

type DateLike = { toISOString(): string };

/** Turns a [start, end] picker value into its cached form; an incomplete range is not cached. */
export function toCachedDateRange(
  range: readonly [DateLike | null | undefined, DateLike | null | undefined] | null | undefined,
): CachedDateRange | undefined {
  const [start, end] = range ?? [];
  return start && end ? { from: start.toISOString(), to: end.toISOString() } : undefined;
}

/**
 * Reads a serialised entry. Returns null when there is none, it cannot be parsed, its shape is
 * wrong, or it is older than `ttl`; the caller then drops it.
 */
export function parseListCache<F>(raw: string | null, now = Date.now(), ttl = LIST_CACHE_TTL_MS) {
  if (!raw) return null;
  try {
    const entry = JSON.parse(raw) as Partial<ListCacheEntry<F>> | null;
    if (
      typeof entry !== 'object' ||
      entry === null ||
      typeof entry.timestamp !== 'number' ||
      typeof entry.page !== 'number' ||
      typeof entry.filters !== 'object' ||
      entry.filters === null
    ) {
      return null;
    }
    if (now - entry.timestamp > ttl) return null;
    return entry as ListCacheEntry<F>;
  } catch {
    return null;
  }
}

/**
 * Keeps a list page's filters and page across a visit to a detail page. The saved state is
 * restored only when the user comes back (`?back=1` or the browser's back button), so opening
 * the list from the menu always starts fresh.
 */
export function useListCache<F extends object>(pageKey: ListCacheKey) {
  const navigationType = useNavigationType();
  const [searchParams] = useSearchParams();
  const isReturn = searchParams.get('back') === '1' || navigationType === 'POP';

  // Read once per mount: the restored value seeds the page's initial state.
  // biome-ignore lint/correctness/useExhaustiveDependencies: deliberately read only on mount
  const restored = useMemo(() => {
    if (!isReturn) return null;
    const { [pageKey]: raw, setQueryCache } = useQueryCacheStore.getState();
    const entry = parseListCache<F>(raw);
    // An expired or unreadable entry is removed so it is not tried again.
    if (raw && !entry) setQueryCache(pageKey, null);
    return entry ? { filters: entry.filters, page: entry.page } : null;
  }, []);

  const save = useCallback(
    (filters: F, page: number) => {
      const entry: ListCacheEntry<F> = { filters, page, timestamp: Date.now() };
      useQueryCacheStore.getState().setQueryCache(pageKey, JSON.stringify(entry));
    },
    [pageKey],
  );

  const clear = useCallback(() => useQueryCacheStore.getState().setQueryCache(pageKey, null), [pageKey]);

  return { restored, save, clear };
}
