import { projectUrl } from '@/lib/api/project-url';

// One place for the feature's URLs and query keys, so a write invalidates exactly what it changed.
// Calls, numbers and assistant options have their own shared roots (src/entities).

export const tasksUrl = (projectId: string, path = '') => projectUrl(projectId, `/tasks${path}`);

export const taskUrl = (projectId: string, taskId: string, path = '') =>
  tasksUrl(projectId, `/${encodeURIComponent(taskId)}${path}`);

export const importUrl = (projectId: string, taskId: string, importId: string, path = '') =>
  taskUrl(projectId, taskId, `/imports/${encodeURIComponent(importId)}${path}`);

export const taskKeys = {
  all: (projectId: string) => ['projects', projectId, 'tasks'] as const,
  lists: (projectId: string) => [...taskKeys.all(projectId), 'list'] as const,
  task: (projectId: string, taskId: string) => [...taskKeys.all(projectId), 'task', taskId] as const,
  detail: (projectId: string, taskId: string) => [...taskKeys.task(projectId, taskId), 'detail'] as const,
  preflight: (projectId: string, taskId: string) =>
    [...taskKeys.task(projectId, taskId), 'preflight'] as const,
  contacts: (projectId: string, taskId: string) => [...taskKeys.task(projectId, taskId), 'contacts'] as const,
  assistantVersions: (projectId: string, assistantId: string) =>
    ['projects', projectId, 'assistants', 'published-versions', assistantId] as const,
};
