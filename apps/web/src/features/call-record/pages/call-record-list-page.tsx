import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { useAssistantOptions } from '@/entities/assistant/api/get-assistant-options';
import { useCallEvents } from '@/entities/call/api/call-events';
import { callKeys } from '@/entities/call/api/call-query-keys';
import { CallDrillChips } from '@/entities/call/components/call-drill-chips';
import { CallFilterBar } from '@/entities/call/components/call-filter-bar';
import {
  CALL_PAGE_SIZE,
  type CallFilters,
  callFiltersFromQuery,
  hasCallFilterQuery,
  lastWeekCallFilters,
  toCallQuery,
  withFilterDefaults,
} from '@/entities/call/utils/call-filters';
import { useListCache } from '@/lib/list-cache';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCalls } from '../api/get-calls';
import { CallRecordExportButton } from '../components/call-record-export-button';
import { CallRecordTable } from '../components/call-record-table';

/** Bursts of live events (a task dialling many numbers) refresh the list at most this often. */
export const LIVE_REFRESH_MS = 1000;

const FILTER_FIELDS = [
  'range',
  'direction',
  'endReason',
  'intentGrade',
  'assistant',
  'number',
  'talkTime',
  'tags',
] as const;

// A cache written by an older console may lack newer keys; the list must still open.
const restoredFilters = (cached: Partial<CallFilters>): CallFilters =>
  withFilterDefaults({ sort: 'startedAt', order: 'desc', ...cached });

export function CallRecordListPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const queryClient = useQueryClient();
  const cache = useListCache<CallFilters>('callRecordQueryCache');
  const [searchParams, setSearchParams] = useSearchParams();
  // A link with filters (a report's drill-down) opens exactly those; otherwise the cached list.
  const [fromUrl] = useState(() => hasCallFilterQuery(searchParams));
  const [filters, setFilters] = useState<CallFilters>(() =>
    fromUrl
      ? restoredFilters(callFiltersFromQuery(searchParams))
      : cache.restored
        ? restoredFilters(cache.restored.filters)
        : lastWeekCallFilters(),
  );
  const [page, setPage] = useState(() => (fromUrl ? 1 : (cache.restored?.page ?? 1)));
  // Opened from a link, the URL follows the filters, so a reload or a shared link shows this list.
  // biome-ignore lint/correctness/useExhaustiveDependencies: written when the filters change only
  useEffect(() => {
    if (fromUrl || filters.drill) setSearchParams(toCallQuery(filters), { replace: true });
  }, [filters]);
  const calls = useCalls(projectId, { filters, page, pageSize: CALL_PAGE_SIZE });
  const assistants = useAssistantOptions(projectId);

  const refreshTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useCallEvents(projectId, {
    onEvent: (event) => {
      // Turns and answers change nothing the list shows until the call ends.
      if (event.type !== 'started' && event.type !== 'ended' && event.type !== 'updated') return;
      if (refreshTimer.current || !projectId) return;
      refreshTimer.current = setTimeout(() => {
        refreshTimer.current = undefined;
        void queryClient.invalidateQueries({ queryKey: callKeys.lists(projectId) });
      }, LIVE_REFRESH_MS);
    },
  });
  useEffect(() => () => clearTimeout(refreshTimer.current), []);

  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-wrap items-center justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold text-gray-900">通话记录</h1>
          <p className="mt-1 text-sm text-gray-500">
            查看每一通电话的结果、录音与对话内容，进行中的通话实时刷新。
          </p>
        </div>
        <CallRecordExportButton projectId={projectId ?? ''} filters={filters} />
      </header>
      <section className="flex flex-col gap-4 rounded-lg border border-gray-200 bg-white p-6">
        <CallFilterBar
          projectId={projectId}
          fields={FILTER_FIELDS}
          filters={filters}
          resetTo={lastWeekCallFilters}
          assistantOptions={(assistants.data ?? []).map(({ id, name }) => ({ value: id, label: name }))}
          assistantsLoading={assistants.isPending && Boolean(projectId)}
          onSearch={(next) => {
            setFilters(next);
            setPage(1);
          }}
        />
        <CallDrillChips
          drill={filters.drill}
          onChange={(drill) => {
            setFilters(({ drill: _drill, ...current }) => (drill ? { ...current, drill } : current));
            setPage(1);
          }}
        />
        <CallRecordTable
          data={calls.data}
          loading={calls.isPending && Boolean(projectId)}
          page={page}
          pageSize={CALL_PAGE_SIZE}
          sort={filters.sort ?? 'startedAt'}
          order={filters.order ?? 'desc'}
          onPageChange={setPage}
          onSortChange={(sort, order) => {
            setFilters((current) => ({ ...current, sort, order }));
            setPage(1);
          }}
          onOpen={() => cache.save(filters, page)}
        />
      </section>
    </main>
  );
}
