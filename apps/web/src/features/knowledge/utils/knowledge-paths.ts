export const KNOWLEDGE_LIST_PATH = '/knowledge/list';

export const knowledgeDetailPath = (knowledgeBaseId: string) =>
  `/knowledge/${encodeURIComponent(knowledgeBaseId)}`;
