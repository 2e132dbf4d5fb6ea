export const KNOWLEDGE_LIST_PATH = '/knowledge/list';

export const knowledgeDetailPath = (knowledgeBaseId: string) =>
  `/knowledge/${encodeURIComponent(knowledgeBaseId)}`;

export const KNOWLEDGE_TERMS_PATH = '/knowledge/terms';
