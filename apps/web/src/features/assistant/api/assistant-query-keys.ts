// One place for the feature's query keys and URLs, so a write can invalidate exactly what it changed.

export { projectUrl } from '@/lib/api/project-url';

export const assistantKeys = {
  all: (projectId: string) => ['projects', projectId, 'assistants'] as const,
  lists: (projectId: string) => [...assistantKeys.all(projectId), 'list'] as const,
  detail: (projectId: string, id: string) => [...assistantKeys.all(projectId), 'detail', id] as const,
  versions: (projectId: string, id: string) => [...assistantKeys.all(projectId), 'versions', id] as const,
  templates: (projectId: string) => ['projects', projectId, 'assistant-templates'] as const,
  voices: (projectId: string) => ['projects', projectId, 'voices'] as const,
  llmProviders: (projectId: string) => ['projects', projectId, 'llm-providers'] as const,
  speechProviders: (projectId: string) => ['projects', projectId, 'speech-providers'] as const,
  synthesisProviders: (projectId: string) => ['projects', projectId, 'synthesis-providers'] as const,
  speechSettings: (projectId: string) => ['projects', projectId, 'speech-settings'] as const,
  knowledgeBases: (projectId: string) => ['projects', projectId, 'knowledge-bases', 'options'] as const,
};
