import {
  type FlowEdge,
  type FlowGraph,
  type FlowNode,
  type FlowNodeType,
  flowNodeExits,
  flowNodeTitle,
} from '@callpilot/contracts';

/** One setting that differs between two versions of a node (or of the flow's settings). */
export interface FlowFieldChange {
  /** The key in the node's data ('name' and 'type' for the node itself, 'voice.speed' for settings). */
  field: string;
  /** The field as the editor names it; the key when it has no Chinese name. */
  label: string;
  before: unknown;
  after: unknown;
}

export interface FlowNodeChange {
  before: FlowNode;
  after: FlowNode;
  changes: FlowFieldChange[];
}

/** A connection described by its ends, with the exit's label as the editor shows it. */
export interface FlowEdgeChange {
  edge: FlowEdge;
  sourceTitle: string;
  exitLabel: string;
  targetTitle: string;
}

export interface FlowGraphDiff {
  nodesAdded: FlowNode[];
  nodesRemoved: FlowNode[];
  nodesChanged: FlowNodeChange[];
  /** Nodes whose only difference is where they sit on the canvas: no caller hears it. */
  nodesMoved: FlowNode[];
  edgesAdded: FlowEdgeChange[];
  edgesRemoved: FlowEdgeChange[];
  settingsChanged: FlowFieldChange[];
}

const COMMON_LABELS: Record<string, string> = {
  name: '节点名称',
  type: '节点类型',
  text: '放音内容',
  audioId: '音频文件',
  interruptible: '允许打断',
  options: '按键选项',
  timeoutSec: '等待时长',
  maxRetries: '重试次数',
  invalidPrompt: '输入错误提示',
  timeoutPrompt: '超时提示',
  repeatKey: '重听键',
  variable: '保存到变量',
  minDigits: '最少位数',
  maxDigits: '最多位数',
  finishOnHash: '# 号结束输入',
  pattern: '校验规则',
  intents: '意图',
  retryPrompt: '未识别提示',
  branches: '分支',
  assistantId: '智能小助手',
  version: '小助手版本',
  variables: '小助手变量',
  target: '转接号码',
  callerId: '外显号码方式',
  callerIdNumber: '外显号码',
  ringTimeoutSec: '振铃超时',
  maxSeconds: '留言最长时长',
  to: '接收号码',
  content: '短信内容',
  method: '请求方法',
  url: '请求地址',
  headers: '请求头',
  body: '请求体',
  timeoutMs: '超时',
  retries: '重试次数',
  mappings: '响应字段映射',
  defaultResult: '默认结果',
  assignments: '变量赋值',
  flowId: '子流程',
  reason: '结束原因',
};

// The same key means a different prompt on different node types.
const TYPE_LABELS: Partial<Record<FlowNodeType, Record<string, string>>> = {
  menu: { prompt: '菜单提示音' },
  collect: { prompt: '收号提示音', timeoutSec: '收号等待时长' },
  speech: { prompt: '提问内容' },
  transfer: { prompt: '转接提示音' },
  voicemail: { prompt: '留言提示音' },
  hangup: { text: '挂机前放音' },
};

const SETTINGS_LABELS: Record<string, string> = {
  voice: '音色',
  'voice.provider': '语音合成服务',
  'voice.voiceId': '音色',
  'voice.speed': '语速',
  'voice.volume': '音量',
  recognizerId: '语音识别配置',
};

/** The Chinese name of a node field, else its key. */
export function flowFieldLabel(type: FlowNodeType, field: string): string {
  return TYPE_LABELS[type]?.[field] ?? COMMON_LABELS[field] ?? field;
}

/** JSON with sorted keys, so two equal settings compare equal whatever order they were written in. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(
          Object.entries(inner as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)),
        )
      : inner,
  );
}

const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);

function nodeChanges(before: FlowNode, after: FlowNode): FlowFieldChange[] {
  const changes: FlowFieldChange[] = [];
  if (before.type !== after.type)
    changes.push({
      field: 'type',
      label: COMMON_LABELS.type as string,
      before: before.type,
      after: after.type,
    });
  if (before.name !== after.name)
    changes.push({
      field: 'name',
      label: COMMON_LABELS.name as string,
      before: before.name,
      after: after.name,
    });
  const beforeData = before.data as Record<string, unknown>;
  const afterData = after.data as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(afterData), ...Object.keys(beforeData)])];
  for (const field of keys) {
    if (same(beforeData[field], afterData[field])) continue;
    changes.push({
      field,
      label: flowFieldLabel(after.type, field),
      before: beforeData[field],
      after: afterData[field],
    });
  }
  return changes;
}

function settingsChanges(before: FlowGraph['settings'], after: FlowGraph['settings']): FlowFieldChange[] {
  const changes: FlowFieldChange[] = [];
  const beforeVoice = before.voice as Record<string, unknown>;
  const afterVoice = after.voice as Record<string, unknown>;
  for (const key of [...new Set([...Object.keys(afterVoice), ...Object.keys(beforeVoice)])]) {
    if (same(beforeVoice[key], afterVoice[key])) continue;
    const field = `voice.${key}`;
    changes.push({
      field,
      label: SETTINGS_LABELS[field] ?? field,
      before: beforeVoice[key],
      after: afterVoice[key],
    });
  }
  if (before.recognizerId !== after.recognizerId)
    changes.push({
      field: 'recognizerId',
      label: SETTINGS_LABELS.recognizerId as string,
      before: before.recognizerId,
      after: after.recognizerId,
    });
  return changes;
}

// Edge ids are generated by the canvas and change on paste or reconnect; what a caller experiences
// is "this exit leads to that node", so that is the identity compared.
const edgeKey = (edge: FlowEdge) => `${edge.source}\u0000${edge.sourceHandle}\u0000${edge.target}`;

function describeEdge(edge: FlowEdge, nodes: Map<string, FlowNode>): FlowEdgeChange {
  const source = nodes.get(edge.source);
  const target = nodes.get(edge.target);
  const exit = source
    ? flowNodeExits(source).find((candidate) => candidate.id === edge.sourceHandle)
    : undefined;
  return {
    edge,
    sourceTitle: source ? flowNodeTitle(source) : edge.source,
    exitLabel: exit?.label ?? edge.sourceHandle,
    targetTitle: target ? flowNodeTitle(target) : edge.target,
  };
}

/**
 * What changed from `before` (the live version) to `after` (the draft): what a publisher checks
 * before callers hear it. Nodes are matched by id; edges by their ends.
 */
export function diffFlowGraphs(before: FlowGraph, after: FlowGraph): FlowGraphDiff {
  const beforeNodes = new Map(before.nodes.map((node) => [node.id, node]));
  const afterNodes = new Map(after.nodes.map((node) => [node.id, node]));
  const diff: FlowGraphDiff = {
    nodesAdded: after.nodes.filter((node) => !beforeNodes.has(node.id)),
    nodesRemoved: before.nodes.filter((node) => !afterNodes.has(node.id)),
    nodesChanged: [],
    nodesMoved: [],
    edgesAdded: [],
    edgesRemoved: [],
    settingsChanged: settingsChanges(before.settings, after.settings),
  };
  for (const node of after.nodes) {
    const previous = beforeNodes.get(node.id);
    if (!previous) continue;
    const changes = nodeChanges(previous, node);
    if (changes.length > 0) diff.nodesChanged.push({ before: previous, after: node, changes });
    else if (previous.position.x !== node.position.x || previous.position.y !== node.position.y)
      diff.nodesMoved.push(node);
  }
  const beforeEdges = new Set(before.edges.map(edgeKey));
  const afterEdges = new Set(after.edges.map(edgeKey));
  const seen = new Set<string>();
  for (const edge of after.edges) {
    const key = edgeKey(edge);
    if (beforeEdges.has(key) || seen.has(key)) continue;
    seen.add(key);
    diff.edgesAdded.push(describeEdge(edge, afterNodes));
  }
  seen.clear();
  for (const edge of before.edges) {
    const key = edgeKey(edge);
    if (afterEdges.has(key) || seen.has(key)) continue;
    seen.add(key);
    diff.edgesRemoved.push(describeEdge(edge, beforeNodes));
  }
  return diff;
}

/** True when publishing `after` over `before` changes nothing a caller could notice. */
export function isFlowDiffEmpty(diff: FlowGraphDiff): boolean {
  return (
    diff.nodesAdded.length === 0 &&
    diff.nodesRemoved.length === 0 &&
    diff.nodesChanged.length === 0 &&
    diff.edgesAdded.length === 0 &&
    diff.edgesRemoved.length === 0 &&
    diff.settingsChanged.length === 0
  );
}

/** A changed value as one short line ('' when it is too long or structured to show inline). */
export function formatFlowValue(value: unknown): string {
  if (value === null || value === undefined || value === '') return '（空）';
  if (typeof value === 'boolean') return value ? '是' : '否';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value.length > 40 ? `${value.slice(0, 40)}…` : value;
  if (Array.isArray(value)) {
    if (value.length === 0) return '（无）';
    // Lists of options, intents, branches, mappings: named by what the editor shows for each.
    const names = value.map((item: unknown) => {
      if (typeof item === 'string' || typeof item === 'number') return String(item);
      const record = (item ?? {}) as Record<string, unknown>;
      const name = record.key ?? record.name ?? record.variable;
      return typeof name === 'string' ? name : '';
    });
    if (names.every(Boolean)) {
      const joined = names.join('、');
      return joined.length > 40 ? `${joined.slice(0, 40)}…` : joined;
    }
  }
  return '';
}
