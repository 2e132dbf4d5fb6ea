import type { FlowDetail, FlowGraph } from '@callpilot/contracts';

// Stub with the agreed props: the real dialog comes from the flow-tools branch at merge.
export function FlowPublishDialog(_props: {
  open: boolean;
  projectId: string;
  flow: FlowDetail;
  draft: FlowGraph;
  onClose: () => void;
  onPublished: (detail: FlowDetail) => void;
  onJumpToNode: (nodeId: string) => void;
}) {
  return null;
}
