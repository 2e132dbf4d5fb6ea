import type { Trunk } from '@callpilot/contracts';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { put } from '@/lib/request';
import { trunkKeys, trunkUrl } from './get-trunks';

/** 启用 / 停用: a disabled trunk unregisters and carries no calls. */
export function setTrunkEnabled(projectId: string, trunkId: string, enabled: boolean): Promise<Trunk> {
  return put<Trunk>(trunkUrl(projectId, trunkId, '/enabled'), { enabled });
}

export function useSetTrunkEnabled(projectId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ trunkId, enabled }: { trunkId: string; enabled: boolean }) =>
      setTrunkEnabled(projectId, trunkId, enabled),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: trunkKeys.all(projectId) }),
  });
}
