import { FLOW_NODE_LABELS, type FlowNode, flowNodeTitle } from '@callpilot/contracts';
import { Tag } from 'antd';
import type { ReactNode } from 'react';
import {
  type FlowEdgeChange,
  type FlowFieldChange,
  type FlowGraphDiff,
  formatFlowValue,
  isFlowDiffEmpty,
} from './flow-diff';

function Section({ title, count, children }: { title: string; count: number; children: ReactNode }) {
  if (count === 0) return null;
  return (
    <section aria-label={title} className="flex flex-col gap-1">
      <h4 className="m-0 text-sm font-medium text-gray-700">
        {title}（{count}）
      </h4>
      <ul className="m-0 flex list-none flex-col gap-1 p-0 text-sm">{children}</ul>
    </section>
  );
}

function NodeName({ node }: { node: FlowNode }) {
  return (
    <span>
      <span className="font-medium">{flowNodeTitle(node)}</span>
      {node.name.trim() && <span className="ml-1 text-xs text-gray-400">{FLOW_NODE_LABELS[node.type]}</span>}
    </span>
  );
}

function FieldChange({ change }: { change: FlowFieldChange }) {
  const before = formatFlowValue(change.before);
  const after = formatFlowValue(change.after);
  return (
    <li className="text-gray-600">
      {change.label}
      {before && after && (
        <span className="text-gray-500">
          ：<span className="line-through">{before}</span> → {after}
        </span>
      )}
    </li>
  );
}

// Edges are deduplicated by their ends in the diff; their ids may repeat across pasted copies.
const edgeKeyOf = ({ edge }: FlowEdgeChange) => `${edge.source}/${edge.sourceHandle}/${edge.target}`;

function EdgeLine({ change }: { change: FlowEdgeChange }) {
  return (
    <li>
      {change.sourceTitle}
      <span className="text-gray-500">「{change.exitLabel}」</span>→ {change.targetTitle}
    </li>
  );
}

/**
 * What publishing (or rolling back) would change, in the words of the editor: the nodes, their
 * settings by name, and the connections as "exit → node".
 */
export function FlowDiffView({ diff, emptyText }: { diff: FlowGraphDiff; emptyText: string }) {
  if (isFlowDiffEmpty(diff)) {
    return (
      <p className="m-0 text-sm text-gray-500">
        {emptyText}
        {diff.nodesMoved.length > 0 && `（仅 ${diff.nodesMoved.length} 个节点调整了位置）`}
      </p>
    );
  }
  return (
    <div className="flex flex-col gap-3">
      <Section title="新增节点" count={diff.nodesAdded.length}>
        {diff.nodesAdded.map((node) => (
          <li key={node.id}>
            <Tag color="green">新增</Tag>
            <NodeName node={node} />
          </li>
        ))}
      </Section>
      <Section title="删除节点" count={diff.nodesRemoved.length}>
        {diff.nodesRemoved.map((node) => (
          <li key={node.id}>
            <Tag color="red">删除</Tag>
            <NodeName node={node} />
          </li>
        ))}
      </Section>
      <Section title="修改节点" count={diff.nodesChanged.length}>
        {diff.nodesChanged.map(({ after, changes }) => (
          <li key={after.id}>
            <Tag color="blue">修改</Tag>
            <NodeName node={after} />
            <ul className="m-0 mt-1 list-disc pl-12">
              {changes.map((change) => (
                <FieldChange key={change.field} change={change} />
              ))}
            </ul>
          </li>
        ))}
      </Section>
      <Section title="新增连线" count={diff.edgesAdded.length}>
        {diff.edgesAdded.map((change) => (
          <EdgeLine key={edgeKeyOf(change)} change={change} />
        ))}
      </Section>
      <Section title="删除连线" count={diff.edgesRemoved.length}>
        {diff.edgesRemoved.map((change) => (
          <EdgeLine key={edgeKeyOf(change)} change={change} />
        ))}
      </Section>
      <Section title="流程设置" count={diff.settingsChanged.length}>
        {diff.settingsChanged.map((change) => (
          <FieldChange key={change.field} change={change} />
        ))}
      </Section>
      {diff.nodesMoved.length > 0 && (
        <p className="m-0 text-xs text-gray-400">另有 {diff.nodesMoved.length} 个节点仅调整了位置</p>
      )}
    </div>
  );
}
