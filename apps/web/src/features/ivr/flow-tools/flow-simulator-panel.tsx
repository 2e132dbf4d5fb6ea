import type { FlowGraph } from '@callpilot/contracts';

// Stub with the agreed props: the real panel comes from the flow-tools branch at merge.
export function FlowSimulatorPanel(_props: {
  projectId: string;
  flowId: string;
  graph: FlowGraph;
  open: boolean;
  onClose: () => void;
  onHighlight: (path: string[], active: string | null) => void;
}) {
  return null;
}
