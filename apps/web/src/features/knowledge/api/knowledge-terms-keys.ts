/** The URL of a project's 口语词典, or of one of its entries. */
export function knowledgeTermsUrl(projectId: string, termId?: string): string {
  const root = `/api/project/${encodeURIComponent(projectId)}/knowledge-terms`;
  return termId === undefined ? root : `${root}/${encodeURIComponent(termId)}`;
}

export const knowledgeTermKeys = {
  all: (projectId: string) => ['projects', projectId, 'knowledge-terms'] as const,
  lists: (projectId: string) => [...knowledgeTermKeys.all(projectId), 'list'] as const,
  builtin: () => ['knowledge-terms', 'builtin'] as const,
};
