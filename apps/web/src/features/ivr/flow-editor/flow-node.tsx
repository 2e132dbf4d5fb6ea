import { FLOW_NODE_LABELS, type FlowNode, flowNodeExits, flowNodeTitle } from '@callpilot/contracts';
import { Handle, type Node, type NodeProps, Position, useUpdateNodeInternals } from '@xyflow/react';
import { memo, useEffect, useMemo, useRef } from 'react';
import { NODE_META, nodeSummary, useFlowLookups } from './node-meta';
import { useFlowEditorStore } from './store';

/** An xyflow node drawn from one FlowNode; the FlowNode object is the whole of its data. */
export type FlowCanvasNode = Node<{ node: FlowNode }>;

const percent = (share: number) => `${Math.round(share * 100)}%`;
const HIGHLIGHT_RING = { path: ' ring-2 ring-sky-300', active: ' ring-4 ring-emerald-400' } as const;

/**
 * One node on the canvas: type, name, a line on its settings and a handle per exit. Memoised and
 * fed only its own FlowNode (the canvas keeps unchanged nodes' objects), so editing one node of a
 * 200-node flow re-renders that node alone; badges read the store by node id.
 */
function FlowNodeCard({ id, data, selected }: NodeProps<FlowCanvasNode>) {
  const node = data.node;
  const meta = NODE_META[node.type];
  const lookups = useFlowLookups();
  const exits = useMemo(() => flowNodeExits(node), [node]);
  const errors = useFlowEditorStore((s) => s.issueCounts[id]?.errors ?? 0);
  const stat = useFlowEditorStore((s) => s.statsByNode?.[id]);
  const highlight = useFlowEditorStore((s) =>
    s.highlightActive === id ? 'active' : s.highlightPath.has(id) ? 'path' : null,
  );
  const summary = nodeSummary(node, lookups);
  const title = flowNodeTitle(node);

  // Handles are measured once; when the exits change (a menu key typed) xyflow must measure again
  // or edges would look for handles that moved or no longer exist.
  const updateNodeInternals = useUpdateNodeInternals();
  const exitKey = exits.map((exit) => exit.id).join('\u0000');
  const firstExitKey = useRef(exitKey);
  useEffect(() => {
    if (exitKey !== firstExitKey.current) {
      firstExitKey.current = exitKey;
      updateNodeInternals(id);
    }
  }, [exitKey, id, updateNodeInternals]);

  return (
    <div
      className={`w-[240px] rounded-lg border bg-white text-left transition-shadow ${
        selected ? 'border-blue-500 shadow-md' : 'border-gray-200 shadow-sm'
      }${highlight ? HIGHLIGHT_RING[highlight] : ''}`}
    >
      {node.type !== 'start' && (
        <Handle
          type="target"
          position={Position.Left}
          aria-label="入口"
          className="!h-3 !w-3 !border-2 !border-white !bg-gray-400"
        />
      )}
      <div className="flex items-center gap-1.5 px-3 pt-2 text-xs" style={{ color: meta.color }}>
        {meta.icon}
        <span>{FLOW_NODE_LABELS[node.type]}</span>
        {errors > 0 && (
          <span
            className="ml-auto rounded-full bg-red-500 px-1.5 text-[11px] leading-4 text-white"
            title={`${errors} 个错误`}
            role="img"
            aria-label={`${errors} 个错误`}
          >
            {errors}
          </span>
        )}
      </div>
      <div className="truncate px-3 pt-0.5 text-sm font-medium text-gray-900">{title}</div>
      {summary && <div className="truncate px-3 pb-1 text-xs text-gray-500">{summary}</div>}
      {stat && (
        <div className="mx-3 mb-1 rounded bg-sky-50 px-1.5 py-0.5 text-xs text-sky-700">
          到达 {stat.reached} · 挂机 {stat.hungUp}
          <span className="text-sky-500"> · {percent(stat.share)}</span>
        </div>
      )}
      {exits.length > 0 && (
        <div className="border-t border-gray-100 py-1">
          {exits.map((exit) => (
            <div
              key={exit.id}
              className="relative flex h-6 items-center justify-end pr-3 pl-6 text-xs text-gray-600"
            >
              <span className="truncate">{exit.label}</span>
              <Handle
                type="source"
                id={exit.id}
                position={Position.Right}
                aria-label={`出口：${exit.label}`}
                className="!h-2.5 !w-2.5 !border-2 !border-white"
                style={{ background: meta.color }}
              />
            </div>
          ))}
        </div>
      )}
    </div>
  );
}

export const FlowNodeView = memo(FlowNodeCard);
