import {
  ApiOutlined,
  AppstoreOutlined,
  AudioOutlined,
  BranchesOutlined,
  CodeOutlined,
  FieldNumberOutlined,
  InboxOutlined,
  MessageOutlined,
  PartitionOutlined,
  PlayCircleOutlined,
  PoweroffOutlined,
  RobotOutlined,
  RollbackOutlined,
  SoundOutlined,
  SwapOutlined,
} from '@ant-design/icons';
import { FLOW_NODE_LABELS, FLOW_NODE_TYPES, type FlowNode, type FlowNodeType } from '@callpilot/contracts';
import { createContext, type ReactNode, useContext } from 'react';

/** How the palette and the canvas show a node type: icon, accent colour, one line on what it does. */
export const NODE_META: Record<FlowNodeType, { icon: ReactNode; color: string; description: string }> = {
  start: { icon: <PlayCircleOutlined />, color: '#16a34a', description: '来电接通后从这里开始' },
  play: { icon: <SoundOutlined />, color: '#2563eb', description: '播放一段话或上传的录音' },
  menu: { icon: <AppstoreOutlined />, color: '#7c3aed', description: '请来电者按键选择，按键进入不同分支' },
  collect: {
    icon: <FieldNumberOutlined />,
    color: '#7c3aed',
    description: '收集来电者输入的号码、工号等数字',
  },
  speech: { icon: <AudioOutlined />, color: '#7c3aed', description: '听来电者说话，按意图关键词分支' },
  condition: {
    icon: <BranchesOutlined />,
    color: '#d97706',
    description: '按变量、来电号码、时间、工作日分支',
  },
  assistant: { icon: <RobotOutlined />, color: '#0891b2', description: '交给智能小助手接待，结束后继续流程' },
  transfer: { icon: <SwapOutlined />, color: '#0891b2', description: '转接到人工座席号码或 SIP 地址' },
  voicemail: { icon: <InboxOutlined />, color: '#0891b2', description: '录下来电者的留言，附在通话记录中' },
  sms: { icon: <MessageOutlined />, color: '#0d9488', description: '给来电者或指定号码发送短信' },
  http: { icon: <ApiOutlined />, color: '#0d9488', description: '调用业务系统接口，结果存入变量' },
  set: { icon: <CodeOutlined />, color: '#0d9488', description: '给流程变量赋值' },
  subflow: { icon: <PartitionOutlined />, color: '#d97706', description: '运行另一个已发布的流程后回到这里' },
  return: {
    icon: <RollbackOutlined />,
    color: '#d97706',
    description: '子流程到此结束，回到调用它的流程继续',
  },
  hangup: { icon: <PoweroffOutlined />, color: '#dc2626', description: '播放结束语后挂断，记录结束原因' },
};

/** What the palette puts on a drag, and the canvas reads on the drop. */
export const PALETTE_DRAG_TYPE = 'application/x-callpilot-flow-node';

/** The palette: every type a flow may add (a flow has exactly one 开始, made with it). */
export const PALETTE_TYPES = FLOW_NODE_TYPES.filter((type) => type !== 'start');

/** Names of things a node points at by id (assistants, flows, audio), for its one-line summary. */
export type FlowLookups = {
  assistants: ReadonlyMap<string, string>;
  flows: ReadonlyMap<string, string>;
  audio: ReadonlyMap<string, string>;
};
const EMPTY_LOOKUPS: FlowLookups = { assistants: new Map(), flows: new Map(), audio: new Map() };
export const FlowLookupsContext = createContext<FlowLookups>(EMPTY_LOOKUPS);
export const useFlowLookups = () => useContext(FlowLookupsContext);

const clip = (text: string, max = 28) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
};

/** One line on a node's settings, read at a glance on the canvas ('' when there is nothing yet). */
export function nodeSummary(node: FlowNode, lookups: FlowLookups = EMPTY_LOOKUPS): string {
  switch (node.type) {
    case 'start':
      return '来电接通';
    case 'play':
      if (node.data.audioId) return `录音：${lookups.audio.get(node.data.audioId) ?? '已上传的录音'}`;
      return clip(node.data.text);
    case 'menu':
      return node.data.options.length
        ? `按键 ${node.data.options.map((o) => o.key).join(' / ')}`
        : '尚未设置按键';
    case 'collect':
      return `收 ${node.data.minDigits}-${node.data.maxDigits} 位 → {{${node.data.variable}}}`;
    case 'speech':
      return node.data.intents.length
        ? `意图：${clip(node.data.intents.map((i) => i.name).join('、'))}`
        : '尚未设置意图';
    case 'condition':
      return node.data.branches.length
        ? `分支：${clip(node.data.branches.map((b) => b.name).join('、'))}`
        : '尚未设置分支';
    case 'assistant':
      return node.data.assistantId
        ? `${lookups.assistants.get(node.data.assistantId) ?? '已选择小助手'}${node.data.version ? ` v${node.data.version}` : ''}`
        : '尚未选择小助手';
    case 'transfer':
      return node.data.target ? `转接 ${clip(node.data.target)}` : '尚未填写转接号码';
    case 'voicemail':
      return `最长 ${node.data.maxSeconds} 秒`;
    case 'sms':
      return node.data.content ? clip(node.data.content) : '尚未填写短信内容';
    case 'http':
      return node.data.url ? `${node.data.method} ${clip(node.data.url, 24)}` : '尚未填写请求地址';
    case 'set':
      return node.data.assignments.length
        ? clip(node.data.assignments.map((a) => `${a.variable} = ${a.value}`).join('，'))
        : '尚未设置变量';
    case 'subflow':
      return node.data.flowId
        ? `运行「${lookups.flows.get(node.data.flowId) ?? '已删除的流程'}」`
        : '尚未选择流程';
    case 'return':
      return '回到上级流程';
    case 'hangup':
      return node.data.reason ? `结束原因：${clip(node.data.reason)}` : clip(node.data.text) || '挂断';
  }
}

/** Everything the 查找节点 box matches a node by: its name, type and texts. */
export function nodeSearchText(node: FlowNode, lookups: FlowLookups): string {
  const texts: string[] = [node.name, FLOW_NODE_LABELS[node.type], nodeSummary(node, lookups)];
  const walk = (value: unknown) => {
    if (typeof value === 'string') texts.push(value);
    else if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') Object.values(value).forEach(walk);
  };
  walk(node.data);
  return texts.join('\n').toLowerCase();
}
