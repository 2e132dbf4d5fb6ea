/** The URL of a project's knowledge bases, or of one of them. */
export function knowledgeBasesUrl(projectId: string, knowledgeBaseId?: string): string {
  const root = `/api/project/${encodeURIComponent(projectId)}/knowledge-bases`;
  return knowledgeBaseId === undefined ? root : `${root}/${encodeURIComponent(knowledgeBaseId)}`;
}

// Nested so one invalidation of a base refreshes its documents, segments and counts together.
export const knowledgeKeys = {
  all: (projectId: string) => ['projects', projectId, 'knowledge-bases'] as const,
  lists: (projectId: string) => [...knowledgeKeys.all(projectId), 'list'] as const,
  base: (projectId: string, knowledgeBaseId: string) =>
    [...knowledgeKeys.all(projectId), 'base', knowledgeBaseId] as const,
  documents: (projectId: string, knowledgeBaseId: string) =>
    [...knowledgeKeys.base(projectId, knowledgeBaseId), 'documents'] as const,
  segments: (projectId: string, knowledgeBaseId: string) =>
    [...knowledgeKeys.base(projectId, knowledgeBaseId), 'segments'] as const,
  batchTests: (projectId: string, knowledgeBaseId: string) =>
    [...knowledgeKeys.base(projectId, knowledgeBaseId), 'batch-tests'] as const,
};
