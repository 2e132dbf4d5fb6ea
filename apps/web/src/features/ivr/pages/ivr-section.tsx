import { Navigate, Route, Routes, useLocation } from 'react-router';
import { paths } from '@/config/paths';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { IvrDialogsProvider } from '../components/ivr-dialogs';
import { IvrFlowEditorRoute, usePrefetchFlowEditor } from './ivr-flow-editor-route';
import { IvrFlowsPage } from './ivr-flows-page';
import { IvrNumbersPage } from './ivr-numbers-page';
import { IvrTrunksPage } from './ivr-trunks-page';

/**
 * Everything under /ivr. Until the flow editor lands (/ivr/list, /ivr/edit/:id) the numbers page
 * is where inbound calls are set up, so the bare section opens there.
 */
export function IvrSection() {
  const projectId = useUserStore(selectCurrentProjectId);
  usePrefetchFlowEditor(useLocation().pathname === paths.ivrFlows);
  return (
    <IvrDialogsProvider projectId={projectId ?? ''}>
      <Routes>
        <Route index element={<Navigate to={paths.ivrNumbers} replace />} />
        <Route path="numbers" element={<IvrNumbersPage />} />
        <Route path="list" element={<IvrFlowsPage />} />
        <Route path="edit/:flowId" element={<IvrFlowEditorRoute />} />
        <Route path="trunks" element={<IvrTrunksPage />} />
        <Route path="*" element={<Navigate to={paths.ivrNumbers} replace />} />
      </Routes>
    </IvrDialogsProvider>
  );
}
