import { useMemo } from 'react';
import { useSearchParams } from 'react-router';
import { type ReportFilterKey, reportQueryFromSearch } from './report-range';

/**
 * The report's query lives in the URL, so back/forward walks through the ranges looked at and a
 * copied link opens the same view. Every change pushes a history entry.
 */
export function useReportQuery() {
  const [search, setSearch] = useSearchParams();
  const state = useMemo(() => reportQueryFromSearch(search), [search]);

  const update = (
    changes: Partial<Record<'from' | 'to' | 'granularity' | ReportFilterKey, string | undefined>>,
  ) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(changes)) {
      if (value) next.set(key, value);
      else next.delete(key);
    }
    setSearch(next);
  };

  return { state, query: state.ok ? state.query : null, update };
}
