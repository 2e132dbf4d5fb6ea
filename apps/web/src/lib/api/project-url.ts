/** Every project-scoped API path is under /api/project/:projectId (the server checks membership there). */
export const projectUrl = (projectId: string, path: string) =>
  `/api/project/${encodeURIComponent(projectId)}${path}`;
