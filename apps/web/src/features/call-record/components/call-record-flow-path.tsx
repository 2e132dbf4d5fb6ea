import {
  type CallFlowPath,
  FLOW_NODE_LABELS,
  type FlowGraph,
  type FlowNodeType,
  type FlowStep,
  flowNodeExits,
} from '@callpilot/contracts';
import { Button, Empty, Tag } from 'antd';
import { formatOffset } from '@/entities/call/utils/call-format';
import { cn } from '@/lib/utils';

// Exits whose names do not depend on a node's settings; the rest ('key:1', 'intent:…') read
// better with the graph, and still make sense without it.
const FIXED_EXIT_LABELS: Record<string, string> = {
  next: '下一步',
  invalid: '输入错误',
  timeout: '超时',
  nomatch: '未匹配',
  else: '其他',
  success: '成功',
  failure: '失败',
  busy: '忙线',
  no_answer: '无人接听',
  failed: '转接失败',
  transfer: '要求转人工',
};

/** How the path names the exit a step took: the node's own label when the graph is at hand. */
export function flowExitLabel(step: FlowStep, graph: FlowGraph | undefined): string | null {
  if (step.exit === null) return null;
  const node =
    step.flowId === null ? graph?.nodes.find((candidate) => candidate.id === step.nodeId) : undefined;
  const named = node ? flowNodeExits(node).find((exit) => exit.id === step.exit)?.label : undefined;
  if (named) return named;
  if (FIXED_EXIT_LABELS[step.exit]) return FIXED_EXIT_LABELS[step.exit] as string;
  const [kind, id] = step.exit.split(':', 2) as [string, string | undefined];
  if (kind === 'key') return `按 ${id}`;
  if (kind === 'intent') return `意图 ${id}`;
  if (kind === 'branch') return `分支 ${id}`;
  return step.exit;
}

const KEYPAD_NODES: ReadonlySet<FlowNodeType> = new Set(['menu', 'collect']);

function inputLabel(step: FlowStep): string {
  if (KEYPAD_NODES.has(step.nodeType)) return '按键';
  if (step.nodeType === 'speech') return '识别';
  return /^[0-9*#]+$/.test(step.input ?? '') ? '按键' : '识别';
}

/**
 * Where a voicemail starts in the recording: the node's prompt is played first, so the message is
 * the step's last `voicemail.seconds` when the interpreter reported them.
 */
export function voicemailStartMs(step: FlowStep): number {
  const seconds = Number(step.output['voicemail.seconds']);
  if (!Number.isFinite(seconds) || seconds <= 0) return step.atMs;
  return Math.max(step.atMs, step.atMs + step.durationMs - seconds * 1000);
}

type Props = {
  flow: CallFlowPath;
  /** The flow version's graph, for exit names; absent for a draft test call or while it loads. */
  graph?: FlowGraph | undefined;
  /** The call is over: its last step is where it ended. */
  ended: boolean;
  /** The caller put the phone down (rather than the flow hanging up). */
  callerHungUp: boolean;
  /** Absent while there is no playable recording. */
  onPlayVoicemail?: (startMs: number) => void;
};

/** 流程路径: every node the call went through, in order, with what happened there. */
export function CallRecordFlowPath({ flow, graph, ended, callerHungUp, onPlayVoicemail }: Props) {
  if (flow.steps.length === 0) return <Empty description={ended ? '没有经过任何节点' : '等待流程开始…'} />;
  const last = flow.steps.length - 1;
  return (
    <ol aria-label="流程路径" className="flex flex-col">
      {flow.steps.map((step, index) => {
        const endedHere = ended && index === last;
        const exit = flowExitLabel(step, graph);
        const variables = Object.entries(step.output);
        const typeLabel = FLOW_NODE_LABELS[step.nodeType];
        return (
          <li
            // Steps repeat a node (a menu retried); their order is their identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: the path is append-only
            key={index}
            className={cn('relative flex gap-3 pb-4 last:pb-0', step.flowId !== null && 'pl-4')}
          >
            <span className="flex flex-col items-center">
              <span
                className={cn(
                  'mt-1.5 size-2.5 shrink-0 rounded-full',
                  endedHere ? (callerHungUp ? 'bg-red-500' : 'bg-gray-500') : 'bg-[#4D8EFF]',
                )}
              />
              {index < last && <span className="mt-1 w-px flex-1 bg-gray-200" />}
            </span>
            <div className="flex min-w-0 flex-1 flex-col gap-1 text-sm">
              <div className="flex flex-wrap items-center gap-2">
                <span className="font-medium text-gray-900">{step.nodeName || typeLabel}</span>
                <Tag className="!m-0">{typeLabel}</Tag>
                {step.flowId !== null && (
                  <Tag color="purple" className="!m-0">
                    子流程
                  </Tag>
                )}
                <span className="ml-auto font-mono text-xs text-gray-500">{formatOffset(step.atMs)}</span>
              </div>
              {step.input !== null && step.input !== '' && (
                <span className="text-gray-700">
                  {inputLabel(step)}：<span className="font-mono">{step.input}</span>
                </span>
              )}
              {step.detail && <span className="text-gray-600">{step.detail}</span>}
              {variables.length > 0 && (
                <span className="flex flex-wrap gap-1">
                  {variables.map(([name, value]) => (
                    <Tag key={name} color="blue" className="!m-0 font-mono">
                      {name} = {value}
                    </Tag>
                  ))}
                </span>
              )}
              <span className="flex flex-wrap items-center gap-2">
                {exit && <span className="text-xs text-gray-500">→ {exit}</span>}
                {endedHere && (
                  <Tag color={callerHungUp ? 'red' : 'default'} className="!m-0">
                    {callerHungUp ? '在此挂断' : '在此结束'}
                  </Tag>
                )}
                {step.nodeType === 'voicemail' && onPlayVoicemail && (
                  <Button
                    type="link"
                    size="small"
                    className="!px-0"
                    onClick={() => onPlayVoicemail(voicemailStartMs(step))}
                  >
                    播放留言
                  </Button>
                )}
              </span>
            </div>
          </li>
        );
      })}
    </ol>
  );
}
