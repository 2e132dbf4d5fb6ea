import {
  FLOW_NODE_TYPES,
  type FlowEdge,
  type FlowNode,
  type FlowNodeType,
  flowNodeExits,
  flowNodeTitle,
} from '@callpilot/contracts';
import {
  Background,
  BackgroundVariant,
  type Connection,
  Controls,
  type EdgeChange,
  MarkerType,
  MiniMap,
  type NodeChange,
  type OnBeforeDelete,
  ReactFlow,
  useReactFlow,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { type DragEvent, useCallback, useMemo, useRef, useState } from 'react';
import { toast } from 'sonner';
import { type FlowCanvasEdge, FlowEdgeView } from './flow-edge';
import { type FlowCanvasNode, FlowNodeView } from './flow-node';
import { NODE_META, PALETTE_DRAG_TYPE } from './node-meta';
import { useFlowEditorStore } from './store';

const nodeTypes = Object.fromEntries(FLOW_NODE_TYPES.map((type) => [type, FlowNodeView]));
const edgeTypes = { exit: FlowEdgeView };
const SNAP_GRID: [number, number] = [16, 16];
const DELETE_KEYS = ['Backspace', 'Delete'];
const FIT_VIEW_OPTIONS = { maxZoom: 1, padding: 0.15 };
/**
 * From this many nodes the canvas draws only what is in view: panning and dragging in a big flow
 * then touch a screenful of nodes. A small flow is all in view anyway, and skips the bookkeeping.
 */
const CULL_FROM_NODES = 100;
const ARIA_LABELS = {
  'node.a11yDescription.default': '按回车或空格选中节点，按 Delete 删除，按 Esc 取消。',
  'node.a11yDescription.keyboardDisabled':
    '按回车或空格选中节点，用方向键移动，按 Delete 删除，按 Esc 取消。',
  'node.a11yDescription.ariaLiveMessage': ({ x, y }: { direction: string; x: number; y: number }) =>
    `节点已移动到 ${x}, ${y}`,
  'edge.a11yDescription.default': '按回车或空格选中连线，按 Delete 删除，按 Esc 取消。',
  'controls.ariaLabel': '画布控制',
  'controls.zoomIn.ariaLabel': '放大',
  'controls.zoomOut.ariaLabel': '缩小',
  'controls.fitView.ariaLabel': '适应画布',
  'controls.interactive.ariaLabel': '锁定画布',
  'minimap.ariaLabel': '缩略图',
  'handle.ariaLabel': '连接点',
};

type Size = { width: number; height: number };

type NodeCacheEntry = { node: FlowNode; selected: boolean; measured: Size | undefined; out: FlowCanvasNode };

/**
 * xyflow nodes from the graph, reusing the previous object of every node whose FlowNode,
 * selection and size did not change: xyflow then skips it, and its memoised component does not
 * render. Editing one node of 200 rebuilds one object.
 */
function useCanvasNodes(nodes: FlowNode[], selectedIds: string[], measured: ReadonlyMap<string, Size>) {
  const cache = useRef(new Map<string, NodeCacheEntry>());
  return useMemo(() => {
    const selected = new Set(selectedIds);
    const next = new Map<string, NodeCacheEntry>();
    const out = nodes.map((node) => {
      const isSelected = selected.has(node.id);
      const size = measured.get(node.id);
      const hit = cache.current.get(node.id);
      const entry =
        hit && hit.node === node && hit.selected === isSelected && hit.measured === size
          ? hit
          : {
              node,
              selected: isSelected,
              measured: size,
              out: {
                id: node.id,
                type: node.type,
                position: node.position,
                data: { node },
                selected: isSelected,
                measured: size,
                ariaLabel: flowNodeTitle(node),
              },
            };
      next.set(node.id, entry);
      return entry.out;
    });
    cache.current = next;
    return out;
  }, [nodes, selectedIds, measured]);
}

type EdgeCacheEntry = {
  edge: FlowEdge;
  label: string;
  highlighted: boolean;
  selected: boolean;
  out: FlowCanvasEdge;
};

function useCanvasEdges(
  nodes: FlowNode[],
  edges: FlowEdge[],
  selectedIds: string[],
  highlightSteps: ReadonlySet<string>,
) {
  const labelCache = useRef(new WeakMap<FlowNode, Map<string, string>>());
  const cache = useRef(new Map<string, EdgeCacheEntry>());
  return useMemo(() => {
    const labels = new Map<string, Map<string, string>>();
    for (const node of nodes) {
      let exits = labelCache.current.get(node);
      if (!exits) {
        exits = new Map(flowNodeExits(node).map((exit) => [exit.id, exit.label]));
        labelCache.current.set(node, exits);
      }
      labels.set(node.id, exits);
    }
    const selected = new Set(selectedIds);
    const next = new Map<string, EdgeCacheEntry>();
    const out: FlowCanvasEdge[] = [];
    for (const edge of edges) {
      const label = labels.get(edge.source)?.get(edge.sourceHandle) ?? '';
      const highlighted = highlightSteps.has(`${edge.source}\u0000${edge.target}`);
      const isSelected = selected.has(edge.id);
      const hit = cache.current.get(edge.id);
      const entry =
        hit &&
        hit.edge === edge &&
        hit.label === label &&
        hit.highlighted === highlighted &&
        hit.selected === isSelected
          ? hit
          : {
              edge,
              label,
              highlighted,
              selected: isSelected,
              out: {
                id: edge.id,
                source: edge.source,
                target: edge.target,
                sourceHandle: edge.sourceHandle,
                type: 'exit',
                selected: isSelected,
                animated: highlighted,
                data: { label, highlighted },
                markerEnd: { type: MarkerType.ArrowClosed, width: 16, height: 16 },
                ariaLabel: label ? `连线：${label}` : '连线',
              },
            };
      next.set(edge.id, entry);
      out.push(entry.out);
    }
    cache.current = next;
    return out;
  }, [nodes, edges, selectedIds, highlightSteps]);
}

/** The flow on @xyflow/react: draws the store's graph and turns every gesture into a store action. */
export function FlowCanvas() {
  const graph = useFlowEditorStore((s) => s.graph);
  const selectedNodeIds = useFlowEditorStore((s) => s.selectedNodeIds);
  const selectedEdgeIds = useFlowEditorStore((s) => s.selectedEdgeIds);
  const highlightSteps = useFlowEditorStore((s) => s.highlightSteps);
  const [measured, setMeasured] = useState<ReadonlyMap<string, Size>>(() => new Map());
  const { screenToFlowPosition } = useReactFlow();

  const nodes = useCanvasNodes(graph.nodes, selectedNodeIds, measured);
  const edges = useCanvasEdges(graph.nodes, graph.edges, selectedEdgeIds, highlightSteps);

  const onNodesChange = useCallback((changes: NodeChange<FlowCanvasNode>[]) => {
    const store = useFlowEditorStore.getState();
    const moves: { id: string; position: { x: number; y: number } }[] = [];
    let dragging = false;
    let moved = false;
    let sizes: Map<string, Size> | null = null;
    let selection: string[] | null = null;
    for (const change of changes) {
      if (change.type === 'dimensions' && change.dimensions) {
        sizes ??= new Map();
        sizes.set(change.id, { width: change.dimensions.width, height: change.dimensions.height });
      } else if (change.type === 'position') {
        moved = true;
        if (change.position) moves.push({ id: change.id, position: change.position });
        dragging ||= change.dragging ?? false;
      } else if (change.type === 'select') {
        selection ??= store.selectedNodeIds.slice();
        if (change.selected && !selection.includes(change.id)) selection.push(change.id);
        if (!change.selected) selection = selection.filter((id) => id !== change.id);
      }
      // Removals arrive through onDelete, as one undo step with their edges.
    }
    if (sizes) {
      const measuredSizes = sizes;
      setMeasured((current) => {
        const next = new Map(current);
        for (const [id, size] of measuredSizes) {
          const previous = current.get(id);
          if (previous?.width !== size.width || previous?.height !== size.height) next.set(id, size);
        }
        return next;
      });
    }
    if (moved) store.moveNodes(moves, dragging);
    if (selection) store.select(selection, useFlowEditorStore.getState().selectedEdgeIds);
  }, []);

  const onEdgesChange = useCallback((changes: EdgeChange<FlowCanvasEdge>[]) => {
    const store = useFlowEditorStore.getState();
    let selection: string[] | null = null;
    for (const change of changes) {
      if (change.type !== 'select') continue;
      selection ??= store.selectedEdgeIds.slice();
      if (change.selected && !selection.includes(change.id)) selection.push(change.id);
      if (!change.selected) selection = selection.filter((id) => id !== change.id);
    }
    if (selection) store.select(useFlowEditorStore.getState().selectedNodeIds, selection);
  }, []);

  const onConnect = useCallback((connection: Connection) => {
    if (!connection.sourceHandle) return;
    useFlowEditorStore.getState().connect({
      source: connection.source,
      sourceHandle: connection.sourceHandle,
      target: connection.target,
    });
  }, []);

  const onBeforeDelete: OnBeforeDelete<FlowCanvasNode, FlowCanvasEdge> = useCallback(
    async ({ nodes, edges }) => {
      if (!nodes.some((node) => node.type === 'start')) return true;
      toast.warning('「开始」节点不能删除');
      const rest = nodes.filter((node) => node.type !== 'start');
      const restIds = new Set(rest.map((node) => node.id));
      const restEdges = edges.filter(
        (edge) => edge.selected || restIds.has(edge.source) || restIds.has(edge.target),
      );
      if (rest.length === 0 && restEdges.length === 0) return false;
      return { nodes: rest, edges: restEdges };
    },
    [],
  );

  const onDelete = useCallback(
    ({ nodes, edges }: { nodes: FlowCanvasNode[]; edges: FlowCanvasEdge[] }) =>
      useFlowEditorStore.getState().deleteElements(
        nodes.map((node) => node.id),
        edges.map((edge) => edge.id),
      ),
    [],
  );

  const onDragOver = useCallback((event: DragEvent) => {
    if (!event.dataTransfer.types.includes(PALETTE_DRAG_TYPE)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
  }, []);

  const onDrop = useCallback(
    (event: DragEvent) => {
      const type = event.dataTransfer.getData(PALETTE_DRAG_TYPE) as FlowNodeType;
      if (!FLOW_NODE_TYPES.includes(type) || type === 'start') return;
      event.preventDefault();
      const point = screenToFlowPosition({ x: event.clientX, y: event.clientY });
      // The node's header lands under the pointer, as if it had been picked up there.
      useFlowEditorStore.getState().addNode(type, { x: point.x - 120, y: point.y - 20 });
    },
    [screenToFlowPosition],
  );

  return (
    <div className="h-full w-full">
      <ReactFlow<FlowCanvasNode, FlowCanvasEdge>
        onDragOver={onDragOver}
        onDrop={onDrop}
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        edgeTypes={edgeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onBeforeDelete={onBeforeDelete}
        onDelete={onDelete}
        deleteKeyCode={DELETE_KEYS}
        snapToGrid
        snapGrid={SNAP_GRID}
        fitView
        fitViewOptions={FIT_VIEW_OPTIONS}
        minZoom={0.2}
        maxZoom={2}
        onlyRenderVisibleElements={graph.nodes.length >= CULL_FROM_NODES}
        ariaLabelConfig={ARIA_LABELS}
      >
        <Background variant={BackgroundVariant.Dots} gap={16} size={1} />
        <MiniMap<FlowCanvasNode>
          pannable
          zoomable
          nodeColor={(node) => NODE_META[node.data.node.type].color}
          className="!bg-white"
        />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
