import type { Trunk, TrunkWriteRequest } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { projectNumberKeys } from '@/entities/project-number/api/get-project-numbers';
import { post, put } from '@/lib/request';
import { trunkKeys, trunksUrl, trunkUrl } from './get-trunks';

/** Creates a trunk, or updates it when `id` is given; an empty password keeps the stored one. */
export function saveTrunk(projectId: string, body: TrunkWriteRequest, id?: string): Promise<Trunk> {
  const payload: TrunkWriteRequest = { ...body };
  if (!payload.password) delete payload.password;
  return id
    ? put<Trunk>(trunkUrl(projectId, id), payload, { retry: 0 })
    : post<Trunk>(trunksUrl(projectId), payload);
}

export function useSaveTrunk(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ body, id }: { body: TrunkWriteRequest; id?: string }) => saveTrunk(projectId, body, id),
    onSuccess: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: trunkKeys.all(projectId) }),
        // The numbers' page shows each number's trunk by name.
        queryClient.invalidateQueries({ queryKey: projectNumberKeys.all(projectId) }),
      ]),
  });
}
