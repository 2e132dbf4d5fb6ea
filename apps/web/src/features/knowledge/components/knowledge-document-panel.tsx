import { KnowledgeDocumentTable } from './knowledge-document-table';
import { KnowledgeDocumentUpload } from './knowledge-document-upload';

export function KnowledgeDocumentPanel({
  projectId,
  knowledgeBaseId,
}: {
  projectId: string;
  knowledgeBaseId: string;
}) {
  return (
    <div className="flex flex-col gap-6">
      <KnowledgeDocumentUpload projectId={projectId} knowledgeBaseId={knowledgeBaseId} />
      <KnowledgeDocumentTable projectId={projectId} knowledgeBaseId={knowledgeBaseId} />
    </div>
  );
}
