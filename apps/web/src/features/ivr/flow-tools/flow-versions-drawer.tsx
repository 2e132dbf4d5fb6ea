import type { FlowDetail } from '@callpilot/contracts';

// Stub with the agreed props: the real drawer comes from the flow-tools branch at merge.
export function FlowVersionsDrawer(_props: {
  open: boolean;
  projectId: string;
  flowId: string;
  onClose: () => void;
  onRolledBack: (detail: FlowDetail) => void;
}) {
  return null;
}
