import { projectUrl } from '@/lib/api/project-url';

// The one root for everything cached about calls. Every list of calls (the records list, a task's
// calls, the dashboard's latest) sits under `lists`, so a write to a call (grade, tags) or a live
// event refreshes all of them at once.

export const callsUrl = (projectId: string, path = '') => projectUrl(projectId, `/calls${path}`);

export const callUrl = (projectId: string, callId: string, path = '') =>
  callsUrl(projectId, `/${encodeURIComponent(callId)}${path}`);

export const callKeys = {
  all: (projectId: string) => ['projects', projectId, 'calls'] as const,
  lists: (projectId: string) => [...callKeys.all(projectId), 'list'] as const,
  /** One list of calls: `scope` names who shows it ('records', 'task', 'latest'), `params` what it asks. */
  list: (projectId: string, scope: string, params?: unknown) =>
    [...callKeys.lists(projectId), scope, ...(params === undefined ? [] : [params])] as const,
  tags: (projectId: string) => [...callKeys.all(projectId), 'tags'] as const,
  detail: (projectId: string, id: string) => [...callKeys.all(projectId), 'detail', id] as const,
  neighbors: (projectId: string, id: string) => [...callKeys.all(projectId), 'neighbors', id] as const,
  recording: (projectId: string, id: string) => [...callKeys.all(projectId), 'recording', id] as const,
};
