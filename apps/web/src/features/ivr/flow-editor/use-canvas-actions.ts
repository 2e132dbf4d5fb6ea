import type { FlowNodeType } from '@callpilot/contracts';
import { useReactFlow, useStoreApi } from '@xyflow/react';
import { useCallback } from 'react';
import { NODE_WIDTH } from './graph-ops';
import { useFlowEditorStore } from './store';

/** Selects a node and brings it to the middle of the canvas (issue links, 查找节点, publish errors). */
export function useFocusNode() {
  const { getInternalNode, setCenter, getZoom } = useReactFlow();
  const select = useFlowEditorStore((s) => s.select);
  return useCallback(
    (nodeId: string) => {
      select([nodeId]);
      const node = getInternalNode(nodeId);
      if (!node) return;
      const width = node.measured.width ?? 240;
      const height = node.measured.height ?? 120;
      void setCenter(
        node.internals.positionAbsolute.x + width / 2,
        node.internals.positionAbsolute.y + height / 2,
        { zoom: Math.max(getZoom(), 1), duration: 300 },
      );
    },
    [getInternalNode, getZoom, select, setCenter],
  );
}

/** Adds a node where the user is looking: the viewport's centre, stepped aside from nodes already there. */
export function useAddNodeAtCenter() {
  const flow = useStoreApi();
  const addNode = useFlowEditorStore((s) => s.addNode);
  return useCallback(
    (type: FlowNodeType) => {
      const { width, height, transform } = flow.getState();
      const [x, y, zoom] = transform;
      const centre = {
        x: ((width || 800) / 2 - x) / zoom - NODE_WIDTH / 2,
        y: ((height || 600) / 2 - y) / zoom - 40,
      };
      const nodes = useFlowEditorStore.getState().graph.nodes;
      const occupied = (p: { x: number; y: number }) =>
        nodes.some((n) => Math.abs(n.position.x - p.x) < 24 && Math.abs(n.position.y - p.y) < 24);
      const position = { ...centre };
      for (let step = 1; occupied(position) && step < 50; step++) {
        position.x = centre.x + step * 32;
        position.y = centre.y + step * 32;
      }
      return addNode(type, position);
    },
    [addNode, flow],
  );
}
