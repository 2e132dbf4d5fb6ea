import { SearchOutlined } from '@ant-design/icons';
import { FLOW_NODE_LABELS, flowNodeTitle } from '@callpilot/contracts';
import { Select } from 'antd';
import { useMemo, useState } from 'react';
import { nodeSearchText, useFlowLookups } from './node-meta';
import { useFlowEditorStore } from './store';
import { useFocusNode } from './use-canvas-actions';

/** 查找节点: by name, type or any text in its settings; choosing one selects it and centres the canvas on it. */
export function FlowNodeSearch() {
  const nodes = useFlowEditorStore((s) => s.graph.nodes);
  const lookups = useFlowLookups();
  const focusNode = useFocusNode();
  const [open, setOpen] = useState(false);
  // Built when the list opens, not on every edit of a big flow.
  const options = useMemo(
    () =>
      open
        ? nodes.map((node) => ({
            value: node.id,
            label: `${flowNodeTitle(node)} · ${FLOW_NODE_LABELS[node.type]}`,
            search: nodeSearchText(node, lookups),
          }))
        : [],
    [open, nodes, lookups],
  );
  return (
    <Select
      aria-label="查找节点"
      className="!w-48"
      placeholder="查找节点"
      suffixIcon={<SearchOutlined />}
      value={null}
      open={open}
      onOpenChange={setOpen}
      showSearch={{
        filterOption: (input, option) => (option?.search ?? '').includes(input.trim().toLowerCase()),
      }}
      notFoundContent="没有匹配的节点"
      options={options}
      onSelect={(nodeId: string | null) => {
        setOpen(false);
        if (nodeId) focusNode(nodeId);
      }}
    />
  );
}
