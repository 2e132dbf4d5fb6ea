import { lazy, Suspense, useEffect } from 'react';
import { RouteFallback } from '@/components/route-fallback';

// The editor carries the canvas library; the list, numbers and trunks pages do not pay for it.

type EditorModule = typeof import('./ivr-flow-editor-page');
let editorModule: EditorModule | null = null;

/** Fetches the editor's code once, and remembers it so the route can render it at once. */
const loadFlowEditor = () =>
  import('./ivr-flow-editor-page').then((loaded) => {
    editorModule = loaded;
    return loaded;
  });

const LazyFlowEditorPage = lazy(async () => ({ default: (await loadFlowEditor()).IvrFlowEditorPage }));

/** /ivr/edit/:flowId. */
export function IvrFlowEditorRoute() {
  // Already fetched (the list prefetches it): render it directly. Suspending, even on an import
  // that has resolved, holds the page back by React's 300 ms reveal throttle.
  if (editorModule) {
    const Page = editorModule.IvrFlowEditorPage;
    return <Page />;
  }
  return (
    <Suspense fallback={<RouteFallback />}>
      <LazyFlowEditorPage />
    </Suspense>
  );
}

/**
 * While `active` (the flow list is shown), fetches the editor when the browser is idle: 编辑 then
 * opens a flow without waiting for the canvas library, half of a 200-node flow's opening time
 * otherwise. Without an idle callback (older Safari, jsdom) the editor loads on demand.
 */
export function usePrefetchFlowEditor(active: boolean) {
  useEffect(() => {
    if (!active || editorModule || typeof window.requestIdleCallback !== 'function') return;
    const handle = window.requestIdleCallback(() => void loadFlowEditor().catch(() => {}), { timeout: 3000 });
    return () => window.cancelIdleCallback(handle);
  }, [active]);
}
