import {
  BaseEdge,
  type Edge,
  EdgeLabelRenderer,
  type EdgeProps,
  getSmoothStepPath,
  useStore,
} from '@xyflow/react';
import { memo } from 'react';

/** An xyflow edge drawn from one FlowEdge: the exit it leaves by, and whether a simulation took it. */
export type FlowCanvasEdge = Edge<{ label: string; highlighted: boolean }>;

const LABEL_MIN_ZOOM = 0.5;

function FlowEdgeLine({
  id,
  sourceX,
  sourceY,
  targetX,
  targetY,
  sourcePosition,
  targetPosition,
  data,
  selected,
  markerEnd,
}: EdgeProps<FlowCanvasEdge>) {
  const [path, labelX, labelY] = getSmoothStepPath({
    sourceX,
    sourceY,
    targetX,
    targetY,
    sourcePosition,
    targetPosition,
    borderRadius: 10,
  });
  const highlighted = data?.highlighted ?? false;
  // Below half size the labels are too small to read; leaving them out keeps a big flow light.
  const readable = useStore((s) => s.transform[2] >= LABEL_MIN_ZOOM);
  const stroke = selected ? '#2563eb' : highlighted ? '#0ea5e9' : '#94a3b8';
  return (
    <>
      <BaseEdge
        id={id}
        path={path}
        markerEnd={markerEnd}
        style={{ stroke, strokeWidth: selected || highlighted ? 2.5 : 1.5 }}
      />
      {readable && data?.label && (
        <EdgeLabelRenderer>
          <div
            className="nodrag nopan pointer-events-none absolute rounded border border-gray-200 bg-white px-1 text-[11px] leading-4 text-gray-600"
            style={{ transform: `translate(-50%, -50%) translate(${labelX}px, ${labelY}px)` }}
          >
            {data.label}
          </div>
        </EdgeLabelRenderer>
      )}
    </>
  );
}

export const FlowEdgeView = memo(FlowEdgeLine);
