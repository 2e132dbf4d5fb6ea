import { del } from '@/lib/request';
import { flowSimulationUrl } from './send-flow-simulation-input';

/**
 * Frees the server's session. Fire and forget: the panel is already closing, and a session that
 * has expired on its own is no failure worth a toast.
 */
export function endFlowSimulation(projectId: string, flowId: string, simulationId: string): Promise<void> {
  return del<void>(flowSimulationUrl(projectId, flowId, simulationId), {
    showError: false,
    showLoading: false,
    retry: 0,
  }).catch(() => undefined);
}
