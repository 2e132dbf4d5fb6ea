// One place for the feature's query keys and URLs, so a write can invalidate exactly what it changed.

export const projectUrl = (projectId: string, path: string) =>
  `/api/project/${encodeURIComponent(projectId)}${path}`;

export const callsUrl = (projectId: string, path = '') => projectUrl(projectId, `/calls${path}`);

export const callUrl = (projectId: string, callId: string, path = '') =>
  callsUrl(projectId, `/${encodeURIComponent(callId)}${path}`);

export const callKeys = {
  all: (projectId: string) => ['projects', projectId, 'calls'] as const,
  lists: (projectId: string) => [...callKeys.all(projectId), 'list'] as const,
  tags: (projectId: string) => [...callKeys.all(projectId), 'tags'] as const,
  detail: (projectId: string, id: string) => [...callKeys.all(projectId), 'detail', id] as const,
  neighbors: (projectId: string, id: string) => [...callKeys.all(projectId), 'neighbors', id] as const,
  recording: (projectId: string, id: string) => [...callKeys.all(projectId), 'recording', id] as const,
  assistantOptions: (projectId: string) => ['projects', projectId, 'assistants', 'options'] as const,
};
