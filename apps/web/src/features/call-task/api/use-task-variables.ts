import { usePublishedVersions } from './get-task-assistants';

/** The variable names of the assistant version a task runs, which its contacts may fill. */
export function useTaskVariables(
  projectId: string | undefined,
  assistantId: string | null | undefined,
  version: number | null | undefined,
): string[] {
  const versions = usePublishedVersions(projectId, assistantId);
  const used = versions.data?.find((candidate) => candidate.version === version) ?? versions.data?.[0];
  return used?.config.variables.map((variable) => variable.name) ?? [];
}
