import { Navigate, Route, Routes, useLocation } from 'react-router';
import { paths } from '@/config/paths';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { IvrDialogsProvider } from '../components/ivr-dialogs';
import { IvrFlowEditorRoute, usePrefetchFlowEditor } from './ivr-flow-editor-route';
import { IvrFlowsPage } from './ivr-flows-page';
import { IvrNumbersPage } from './ivr-numbers-page';
import { IvrTrunksPage } from './ivr-trunks-page';

/** Everything under /ivr; the bare section opens the flow list. */
export function IvrSection() {
  const projectId = useUserStore(selectCurrentProjectId);
  usePrefetchFlowEditor(useLocation().pathname === paths.ivrFlows);
  return (
    <IvrDialogsProvider projectId={projectId ?? ''}>
      <Routes>
        <Route index element={<Navigate to={paths.ivrFlows} replace />} />
        <Route path="list" element={<IvrFlowsPage />} />
        <Route path="edit/:flowId" element={<IvrFlowEditorRoute />} />
        <Route path="numbers" element={<IvrNumbersPage />} />
        <Route path="trunks" element={<IvrTrunksPage />} />
        <Route path="*" element={<Navigate to={paths.ivrFlows} replace />} />
      </Routes>
    </IvrDialogsProvider>
  );
}
