import { CloseCircleFilled, DownOutlined, ExclamationCircleFilled, UpOutlined } from '@ant-design/icons';
import { type FlowIssue, validateFlow } from '@callpilot/contracts';
import { useEffect, useState } from 'react';
import { useFlowEditorStore } from './store';
import { useFocusNode } from './use-canvas-actions';

/** Edits settle this long before the flow is validated again: typing stays smooth on big flows. */
export const ISSUES_DEBOUNCE_MS = 300;

/** Keeps the store's issues (the panel, the nodes' badges) in step with the graph, shortly after edits stop. */
export function useLiveIssues() {
  const graph = useFlowEditorStore((s) => s.graph);
  const flowId = useFlowEditorStore((s) => s.flowId);
  useEffect(() => {
    if (useFlowEditorStore.getState().issuesOf === graph) return;
    const timer = setTimeout(
      () => useFlowEditorStore.getState().setIssues(graph, validateFlow(graph, { flowId })),
      ISSUES_DEBOUNCE_MS,
    );
    return () => clearTimeout(timer);
  }, [graph, flowId]);
}

function IssueRow({ issue, onOpen }: { issue: FlowIssue; onOpen: (nodeId: string) => void }) {
  const icon =
    issue.severity === 'error' ? (
      <CloseCircleFilled className="mt-0.5 text-red-500" />
    ) : (
      <ExclamationCircleFilled className="mt-0.5 text-amber-500" />
    );
  if (!issue.nodeId) {
    return (
      <li className="flex items-start gap-2 px-4 py-1 text-sm text-gray-700">
        {icon}
        <span>{issue.message}</span>
      </li>
    );
  }
  const nodeId = issue.nodeId;
  return (
    <li>
      <button
        type="button"
        className="flex w-full items-start gap-2 px-4 py-1 text-left text-sm text-gray-700 hover:bg-gray-50 hover:text-blue-600"
        onClick={() => onOpen(nodeId)}
      >
        {icon}
        <span>{issue.message}</span>
      </button>
    </li>
  );
}

/** 问题: what validateFlow says about the graph now; each problem jumps to its node. */
export function FlowIssuesPanel() {
  const issues = useFlowEditorStore((s) => s.issues);
  const focusNode = useFocusNode();
  const [open, setOpen] = useState(true);
  const errors = issues.filter((i) => i.severity === 'error');
  const warnings = issues.filter((i) => i.severity === 'warning');
  return (
    <section
      aria-label="问题"
      className="flex max-h-[40%] shrink-0 flex-col border-t border-gray-200 bg-white"
    >
      <button
        type="button"
        aria-expanded={open}
        onClick={() => setOpen((value) => !value)}
        className="flex items-center gap-3 px-4 py-2 text-left text-sm"
      >
        <span className="font-medium text-gray-900">问题</span>
        <span className={errors.length ? 'text-red-500' : 'text-gray-500'}>错误 {errors.length}</span>
        <span className={warnings.length ? 'text-amber-600' : 'text-gray-500'}>警告 {warnings.length}</span>
        {issues.length === 0 && <span className="text-green-600">流程检查通过，可以发布</span>}
        <span className="ml-auto text-gray-400">{open ? <DownOutlined /> : <UpOutlined />}</span>
      </button>
      {open && issues.length > 0 && (
        <ul className="overflow-y-auto pb-2">
          {[...errors, ...warnings].map((issue, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a node may have the same message twice
            <IssueRow key={`${issue.nodeId}-${issue.code}-${index}`} issue={issue} onOpen={focusNode} />
          ))}
        </ul>
      )}
    </section>
  );
}
