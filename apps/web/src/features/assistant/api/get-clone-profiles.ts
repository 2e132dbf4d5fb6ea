import { type CloneVendor, cloneVendor, type Paged, type SynthesisProvider } from '@callpilot/contracts';
import { useQuery } from '@tanstack/react-query';
import { get } from '@/lib/request';
import { projectUrl } from './assistant-query-keys';
import { voiceCloneKeys } from './get-voice-clones';

export type CloneProfile = SynthesisProvider & { vendor: CloneVendor };

const canClone = (profile: SynthesisProvider): profile is CloneProfile =>
  cloneVendor.safeParse(profile.vendor).success;

/** The project's synthesis profiles whose vendor can clone a voice (CosyVoice, Volcengine). */
export async function getCloneProfiles(projectId: string): Promise<CloneProfile[]> {
  const page = await get<Paged<SynthesisProvider>>(projectUrl(projectId, '/synthesis-providers'), {
    params: { pageSize: 100 },
  });
  return (page?.items ?? []).filter(canClone);
}

export function useCloneProfiles(projectId: string | undefined, enabled = true) {
  return useQuery({
    queryKey: voiceCloneKeys.profiles(projectId ?? ''),
    queryFn: () => getCloneProfiles(projectId ?? ''),
    enabled: Boolean(projectId) && enabled,
  });
}
