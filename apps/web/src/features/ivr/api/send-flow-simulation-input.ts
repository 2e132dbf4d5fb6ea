import type { FlowSimulationInput, FlowSimulationState } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowUrl } from './flow-keys';

export const flowSimulationUrl = (projectId: string, flowId: string, simulationId: string, path = '') =>
  flowUrl(projectId, flowId, `/simulations/${encodeURIComponent(simulationId)}${path}`);

/**
 * What the simulated caller does (keys, words, silence, hanging up). Answers once the flow waits
 * again or has ended, so an HTTP node's request is inside this call's time.
 */
export function sendFlowSimulationInput(
  projectId: string,
  flowId: string,
  simulationId: string,
  input: FlowSimulationInput,
): Promise<FlowSimulationState> {
  return post<FlowSimulationState>(flowSimulationUrl(projectId, flowId, simulationId, '/input'), input);
}

export function useSendFlowSimulationInput(projectId: string, flowId: string) {
  return useMutation({
    mutationFn: ({ simulationId, input }: { simulationId: string; input: FlowSimulationInput }) =>
      sendFlowSimulationInput(projectId, flowId, simulationId, input),
  });
}
