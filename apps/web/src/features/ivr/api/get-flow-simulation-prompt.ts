import { getBlob } from '@/lib/request';
import { flowSimulationUrl } from './send-flow-simulation-input';

/**
 * The WAV of a simulation's prompt in the offline voice, fetched through the request client so the
 * token goes with it (an <audio src> could not send it). `audioUrl` is the server's own link when
 * it gave one; otherwise the prompt's index names it.
 */
export async function getFlowSimulationPrompt(
  projectId: string,
  flowId: string,
  simulationId: string,
  prompt: { index: number; audioUrl: string | null },
): Promise<Blob> {
  const url = prompt.audioUrl?.startsWith('/api/')
    ? prompt.audioUrl
    : flowSimulationUrl(projectId, flowId, simulationId, `/prompts/${prompt.index}`);
  const { blob } = await getBlob(url, { showLoading: false });
  return blob;
}
