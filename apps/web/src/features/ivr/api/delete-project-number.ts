import { useMutation, useQueryClient } from '@tanstack/react-query';
import { numberUrl, projectNumberKeys } from '@/entities/project-number/api/get-project-numbers';
import { del } from '@/lib/request';

export function deleteProjectNumber(projectId: string, number: string): Promise<unknown> {
  return del<unknown>(numberUrl(projectId, number));
}

export function useDeleteProjectNumber(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (number: string) => deleteProjectNumber(projectId, number),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: projectNumberKeys.all(projectId) }),
  });
}
