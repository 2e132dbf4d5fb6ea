import { Navigate, Route, Routes } from 'react-router';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { KnowledgeDialogsProvider } from '../components/knowledge-dialogs';
import { KNOWLEDGE_LIST_PATH } from '../utils/knowledge-paths';
import { KnowledgeDetailPage } from './knowledge-detail-page';
import { KnowledgeListPage } from './knowledge-list-page';
import { KnowledgeTermsPage } from './knowledge-terms-page';

/** Everything under /knowledge: the list, the 口语词典, and one page per knowledge base. */
export function KnowledgeSection() {
  const projectId = useUserStore(selectCurrentProjectId);
  return (
    <KnowledgeDialogsProvider projectId={projectId ?? ''}>
      <Routes>
        <Route index element={<Navigate to={KNOWLEDGE_LIST_PATH} replace />} />
        <Route path="list" element={<KnowledgeListPage />} />
        <Route path="terms" element={<KnowledgeTermsPage />} />
        <Route path=":knowledgeBaseId" element={<KnowledgeDetailPage />} />
        <Route path="*" element={<Navigate to={KNOWLEDGE_LIST_PATH} replace />} />
      </Routes>
    </KnowledgeDialogsProvider>
  );
}
