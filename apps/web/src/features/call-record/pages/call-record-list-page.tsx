import type { CallSummary } from '@callpilot/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { useLocation, useNavigate } from 'react-router';
import { useListCache } from '@/lib/list-cache';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { callKeys } from '../api/call-record-query-keys';
import { useCalls } from '../api/get-calls';
import { useCallEvents } from '../api/subscribe-call-events';
import { CallRecordExportButton } from '../components/call-record-export-button';
import { CallRecordFilterBar } from '../components/call-record-filter-bar';
import { CallRecordTable } from '../components/call-record-table';
import { CALL_PAGE_SIZE, type CallRecordFilters, defaultCallFilters } from '../utils/call-record-filters';
import { callDetailPath } from '../utils/call-record-paths';

/** Bursts of live events (a task dialling many numbers) refresh the list at most this often. */
export const LIVE_REFRESH_MS = 1000;

// A cache written by an older console may lack newer keys; the list must still open.
function restoredFilters(cached: Partial<CallRecordFilters>): CallRecordFilters {
  return { endReason: [], intentGrade: [], tags: [], sort: 'startedAt', order: 'desc', ...cached };
}

export function CallRecordListPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const navigate = useNavigate();
  const location = useLocation();
  const queryClient = useQueryClient();
  const cache = useListCache<CallRecordFilters>('callRecordQueryCache');
  const [filters, setFilters] = useState<CallRecordFilters>(() =>
    cache.restored ? restoredFilters(cache.restored.filters) : defaultCallFilters(),
  );
  const [page, setPage] = useState(() => cache.restored?.page ?? 1);
  const calls = useCalls(projectId, { filters, page, pageSize: CALL_PAGE_SIZE });

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

  const open = (call: CallSummary) => {
    cache.save(filters, page);
    useQueryCacheStore.getState().setCallDetailBackUrl(`${location.pathname}${location.search}`);
    navigate(callDetailPath(call.id));
  };

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
        <CallRecordFilterBar
          projectId={projectId}
          filters={filters}
          onSearch={(next) => {
            setFilters(next);
            setPage(1);
          }}
        />
        <CallRecordTable
          data={calls.data}
          loading={calls.isPending && Boolean(projectId)}
          page={page}
          pageSize={CALL_PAGE_SIZE}
          sort={filters.sort}
          order={filters.order}
          onPageChange={setPage}
          onSortChange={(sort, order) => {
            setFilters((current) => ({ ...current, sort, order }));
            setPage(1);
          }}
          onOpen={open}
        />
      </section>
    </main>
  );
}
