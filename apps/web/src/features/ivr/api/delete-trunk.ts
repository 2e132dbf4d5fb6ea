import { useMutation, useQueryClient } from '@tanstack/react-query';
import { del } from '@/lib/request';
import { trunkKeys, trunkUrl } from './get-trunks';

/** The server refuses (409) while numbers use the trunk, naming them; the request client shows why. */
export function deleteTrunk(projectId: string, trunkId: string): Promise<unknown> {
  return del<unknown>(trunkUrl(projectId, trunkId));
}

export function useDeleteTrunk(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (trunkId: string) => deleteTrunk(projectId, trunkId),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: trunkKeys.all(projectId) }),
  });
}
