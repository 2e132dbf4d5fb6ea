import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { knowledgeTermKeys, knowledgeTermsUrl } from './knowledge-terms-keys';

export type BuiltinKnowledgeTerm = { standard: string; variants: string[] };

export function getBuiltinKnowledgeTerms(projectId: string): Promise<BuiltinKnowledgeTerm[]> {
  return get<BuiltinKnowledgeTerm[]>(`${knowledgeTermsUrl(projectId)}/builtin`);
}

/** The same for every project and fixed per release: fetched once, when first shown. */
export function useBuiltinKnowledgeTerms(projectId: string | undefined) {
  return useQuery({
    queryKey: knowledgeTermKeys.builtin(),
    queryFn: () => getBuiltinKnowledgeTerms(projectId ?? ''),
    enabled: Boolean(projectId),
    staleTime: Number.POSITIVE_INFINITY,
  });
}
