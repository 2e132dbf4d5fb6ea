import { lazy, Suspense } from 'react';
import { Navigate, Route, Routes } from 'react-router';
import { RouteFallback } from '@/components/route-fallback';
import { paths } from '@/config/paths';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { IvrDialogsProvider } from '../components/ivr-dialogs';
import { IvrFlowsPage } from './ivr-flows-page';
import { IvrNumbersPage } from './ivr-numbers-page';
import { IvrTrunksPage } from './ivr-trunks-page';

// The editor carries the canvas library; the list, numbers and trunks pages do not pay for it.
const IvrFlowEditorPage = lazy(async () => ({
  default: (await import('./ivr-flow-editor-page')).IvrFlowEditorPage,
}));

/** Everything under /ivr; the bare section opens the flow list. */
export function IvrSection() {
  const projectId = useUserStore(selectCurrentProjectId);
  return (
    <IvrDialogsProvider projectId={projectId ?? ''}>
      <Routes>
        <Route index element={<Navigate to={paths.ivrFlows} replace />} />
        <Route path="list" element={<IvrFlowsPage />} />
        <Route
          path="edit/:flowId"
          element={
            <Suspense fallback={<RouteFallback />}>
              <IvrFlowEditorPage />
            </Suspense>
          }
        />
        <Route path="numbers" element={<IvrNumbersPage />} />
        <Route path="trunks" element={<IvrTrunksPage />} />
        <Route path="*" element={<Navigate to={paths.ivrFlows} replace />} />
      </Routes>
    </IvrDialogsProvider>
  );
}
