import type { FlowNodeStats } from '@callpilot/contracts';

// Stub with the agreed props: the real control comes from the flow-tools branch at merge.
export function FlowStatsControl(_props: {
  projectId: string;
  flowId: string;
  enabled: boolean;
  onStats: (stats: FlowNodeStats | null) => void;
}) {
  return null;
}
