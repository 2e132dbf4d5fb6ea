import type { FlowSimulationStart, FlowSimulationState } from '@callpilot/contracts';
import { useMutation } from '@tanstack/react-query';
import { post } from '@/lib/request';
import { flowUrl } from './flow-keys';

/**
 * 开始模拟: the server runs the posted graph (unsaved edits included) until it first waits for the
 * caller or ends, and answers with the session's state.
 */
export function startFlowSimulation(
  projectId: string,
  flowId: string,
  body: FlowSimulationStart,
): Promise<FlowSimulationState> {
  return post<FlowSimulationState>(flowUrl(projectId, flowId, '/simulations'), body);
}

export function useStartFlowSimulation(projectId: string, flowId: string) {
  return useMutation({
    mutationFn: (body: FlowSimulationStart) => startFlowSimulation(projectId, flowId, body),
  });
}
