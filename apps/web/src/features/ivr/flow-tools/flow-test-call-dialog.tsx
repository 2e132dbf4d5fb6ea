// Stub with the agreed props: the real dialog comes from the flow-tools branch at merge.
export function FlowTestCallDialog(_props: {
  open: boolean;
  projectId: string;
  flowId: string;
  onClose: () => void;
}) {
  return null;
}
