import { useSyncExternalStore } from 'react';
import { getLoadingCount, subscribeLoading } from '@/lib/request/loading-counter';

// The request client's `showLoading`: a thin bar across the top while any such call is in flight.
// Plain markup and one keyframe keep it out of the component library, so it costs /login nothing.
export function TopProgressBar() {
  const count = useSyncExternalStore(subscribeLoading, getLoadingCount, getLoadingCount);
  if (count === 0) return null;
  return (
    <div
      role="progressbar"
      aria-label="加载中"
      className="pointer-events-none fixed inset-x-0 top-0 z-[2000] h-0.5 overflow-hidden bg-[#4D8EFF]/20"
    >
      <div className="h-full w-1/3 bg-[#4D8EFF] motion-safe:animate-[top-progress_1.2s_ease-in-out_infinite]" />
      <style>
        {'@keyframes top-progress{0%{transform:translateX(-100%)}100%{transform:translateX(300%)}}'}
      </style>
    </div>
  );
}
