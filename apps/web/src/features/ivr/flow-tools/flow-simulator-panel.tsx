import PauseCircleOutlined from '@ant-design/icons/PauseCircleOutlined';
import PlayCircleOutlined from '@ant-design/icons/PlayCircleOutlined';
import {
  FLOW_NODE_LABELS,
  type FlowGraph,
  type FlowSimulationInput,
  type FlowSimulationState,
  flowNodeExits,
  flowNodeTitle,
} from '@callpilot/contracts';
import { Alert, Button, Drawer, Input, Switch, Tag } from 'antd';
import { type ReactNode, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { endFlowSimulation } from '@/features/ivr/api/end-flow-simulation';
import { getFlowSimulationPrompt } from '@/features/ivr/api/get-flow-simulation-prompt';
import { useSendFlowSimulationInput } from '@/features/ivr/api/send-flow-simulation-input';
import { useStartFlowSimulation } from '@/features/ivr/api/start-flow-simulation';
import { usePromptPlayer } from './use-prompt-player';

type Step = FlowSimulationState['steps'][number];
type Waiting = NonNullable<FlowSimulationState['waiting']>;
/** What the tester did, placed after the prompts that had been spoken when they did it. */
type CallerLine = { id: number; afterPrompts: number; text: string };

const DIAL_KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'];
const KEYS_PATTERN = /^[0-9*#]{1,32}$/;
const CALLER_PATTERN = /^[0-9+]{3,20}$/;

const WAITING_LABELS: Record<Waiting['kind'], string> = {
  digits: '等待按键',
  speech: '等待说话',
  any: '等待按键或说话',
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} 秒`;

/** The node ids the call went through in this flow, in order (a subflow's own nodes are not on this canvas). */
const pathOf = (state: FlowSimulationState) =>
  state.steps.filter((step) => step.flowId === null).map((step) => step.nodeId);

function Heading({ children }: { children: ReactNode }) {
  return <h3 className="m-0 mb-2 text-sm font-semibold text-gray-700">{children}</h3>;
}

function StepLog({ steps, graph }: { steps: Step[]; graph: FlowGraph }) {
  const nodes = useMemo(() => new Map(graph.nodes.map((node) => [node.id, node])), [graph]);
  if (steps.length === 0) return <p className="m-0 text-sm text-gray-400">还没有执行任何节点</p>;
  return (
    <ol aria-label="步骤记录" className="m-0 flex list-none flex-col gap-2 p-0">
      {steps.map((step, index) => {
        const node = step.flowId === null ? nodes.get(step.nodeId) : undefined;
        const exit =
          node && step.exit ? flowNodeExits(node).find((candidate) => candidate.id === step.exit) : null;
        const output = Object.entries(step.output);
        return (
          // Steps only ever append, so their position is their identity.
          // biome-ignore lint/suspicious/noArrayIndexKey: append-only log
          <li key={index} className="rounded border border-gray-100 bg-white px-2 py-1 text-xs">
            <div className="flex items-center gap-2">
              <span className="text-gray-400">{index + 1}</span>
              <span className="font-medium text-gray-800">
                {step.nodeName || FLOW_NODE_LABELS[step.nodeType]}
              </span>
              <span className="text-gray-400">{FLOW_NODE_LABELS[step.nodeType]}</span>
              {step.flowId !== null && <Tag className="!m-0 !text-xs">子流程</Tag>}
              <span className="ml-auto font-mono text-gray-400">
                +{seconds(step.atMs)} · {Math.round(step.durationMs)} ms
              </span>
            </div>
            {(step.input !== null || step.exit !== null) && (
              <div className="mt-0.5 flex flex-wrap gap-x-3 text-gray-600">
                {step.input !== null && <span>输入：{step.input || '（无）'}</span>}
                {step.exit !== null && <span>出口：{exit?.label ?? step.exit}</span>}
              </div>
            )}
            {output.length > 0 && (
              <div className="mt-0.5 break-all text-gray-600">
                设置：{output.map(([name, value]) => `${name} = ${value}`).join('，')}
              </div>
            )}
            {step.detail && <div className="mt-0.5 text-gray-500">{step.detail}</div>}
          </li>
        );
      })}
    </ol>
  );
}

function VariablesTable({ variables }: { variables: Record<string, string> }) {
  const entries = Object.entries(variables).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <p className="m-0 text-sm text-gray-400">暂无变量</p>;
  return (
    <table aria-label="变量" className="w-full border-collapse text-xs">
      <thead>
        <tr className="text-left text-gray-500">
          <th className="border-b border-gray-100 py-1 pr-2 font-normal">变量</th>
          <th className="border-b border-gray-100 py-1 font-normal">值</th>
        </tr>
      </thead>
      <tbody>
        {entries.map(([name, value]) => (
          <tr key={name}>
            <td className="border-b border-gray-50 py-1 pr-2 font-mono text-gray-700">{name}</td>
            <td className="break-all border-b border-gray-50 py-1 text-gray-800">{value || '（空）'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * 模拟运行: runs the editor's current graph on the server, step by step, with the tester as the
 * caller (keys on a dial pad, words, silence, hanging up). A side panel, not a dialog, so the
 * canvas beside it shows the path as `onHighlight` reports it. The server session ends when the
 * panel closes or unmounts.
 */
export function FlowSimulatorPanel({
  projectId,
  flowId,
  graph,
  open,
  onClose,
  onHighlight,
}: {
  projectId: string;
  flowId: string;
  graph: FlowGraph;
  open: boolean;
  onClose: () => void;
  onHighlight: (path: string[], active: string | null) => void;
}) {
  const [callerNumber, setCallerNumber] = useState('13800138000');
  const [session, setSession] = useState<FlowSimulationState | null>(null);
  // By content: the editor may hand over an equal graph in a new object on any render.
  const graphKey = useMemo(() => JSON.stringify(graph), [graph]);
  const [startedWith, setStartedWith] = useState<string | null>(null);
  const [callerLines, setCallerLines] = useState<CallerLine[]>([]);
  const [text, setText] = useState('');
  const [inputError, setInputError] = useState<string | null>(null);
  const [autoPlay, setAutoPlay] = useState(true);
  const start = useStartFlowSimulation(projectId, flowId);
  const send = useSendFlowSimulationInput(projectId, flowId);

  // The id the server knows, for ending it from cleanups that see no fresh state.
  const simulationId = useRef<string | null>(null);
  const onHighlightRef = useRef(onHighlight);
  onHighlightRef.current = onHighlight;

  const player = usePromptPlayer(
    useCallback(
      (index: number) => {
        const id = simulationId.current;
        const prompt = session?.prompts[index];
        if (!id || !prompt) return Promise.reject(new Error('no prompt'));
        return getFlowSimulationPrompt(projectId, flowId, id, { index, audioUrl: prompt.audioUrl });
      },
      [projectId, flowId, session],
    ),
  );

  const endSession = useCallback(() => {
    const id = simulationId.current;
    simulationId.current = null;
    if (id) void endFlowSimulation(projectId, flowId, id);
  }, [projectId, flowId]);

  useEffect(() => endSession, [endSession]);

  const { stop } = player;
  // Closing (or the editor hiding the panel) ends the run and clears the canvas highlight.
  useEffect(() => {
    if (open || !simulationId.current) return;
    endSession();
    stop();
    setSession(null);
    setCallerLines([]);
    onHighlightRef.current([], null);
  }, [open, endSession, stop]);

  // Only a new state from the server plays prompts; switching 自动播放 on does not replay old ones.
  const autoPlayRef = useRef(autoPlay);
  autoPlayRef.current = autoPlay;
  const previousPrompts = useRef(0);
  const { enqueue } = player;
  useEffect(() => {
    if (!session) {
      previousPrompts.current = 0;
      return;
    }
    onHighlightRef.current(pathOf(session), session.waiting?.nodeId ?? null);
    const fresh: number[] = [];
    for (let index = previousPrompts.current; index < session.prompts.length; index++)
      if (session.prompts[index]?.audioUrl !== null) fresh.push(index);
    previousPrompts.current = session.prompts.length;
    if (autoPlayRef.current && fresh.length > 0) enqueue(fresh);
  }, [session, enqueue]);

  const begin = async () => {
    if (!CALLER_PATTERN.test(callerNumber.trim())) {
      setInputError('主叫号码格式不正确');
      return;
    }
    endSession();
    stop();
    setInputError(null);
    const state = await start.mutateAsync({ callerNumber: callerNumber.trim(), calleeNumber: '', graph });
    simulationId.current = state.simulationId;
    previousPrompts.current = 0;
    setCallerLines([]);
    setText('');
    setStartedWith(graphKey);
    setSession(state);
  };

  const answer = async (input: FlowSimulationInput, line: string) => {
    const id = simulationId.current;
    if (!id || !session) return;
    setInputError(null);
    setCallerLines((lines) => [
      ...lines,
      { id: lines.length, afterPrompts: session.prompts.length, text: line },
    ]);
    const state = await send.mutateAsync({ simulationId: id, input });
    if (simulationId.current === id) setSession(state);
  };

  const waiting = session?.waiting ?? null;
  const waitingNode = waiting ? graph.nodes.find((node) => node.id === waiting.nodeId) : undefined;
  // A menu of one-key options takes a key as the caller presses it; other waits collect the keys
  // in the box first (收号 of a phone number, a key followed by #).
  const keysSendAtOnce =
    waiting?.kind === 'any' ||
    (waitingNode?.type === 'menu' && waitingNode.data.options.every((option) => option.key.length === 1));

  const pressKey = (key: string) => {
    if (keysSendAtOnce) void answer({ kind: 'digits', value: key }, `按键 ${key}`).catch(() => undefined);
    else setText((current) => `${current}${key}`);
  };

  const submitText = () => {
    const value = text.trim();
    if (!waiting || !value) return;
    if (waiting.kind === 'digits') {
      if (!KEYS_PATTERN.test(value)) {
        setInputError('按键须为数字、* 或 #');
        return;
      }
      setText('');
      void answer({ kind: 'digits', value }, `按键 ${value}`).catch(() => undefined);
      return;
    }
    setText('');
    void answer({ kind: 'speech', value }, value).catch(() => undefined);
  };

  const endedNodeId = session?.ended?.nodeId ?? null;
  const endedNode = endedNodeId ? graph.nodes.find((node) => node.id === endedNodeId) : undefined;
  const endedAt = endedNode ? flowNodeTitle(endedNode) : endedNodeId;

  const busy = start.isPending || send.isPending;
  const conversation: ReactNode[] = [];
  if (session) {
    const linesAt = (count: number) =>
      callerLines
        .filter((line) => line.afterPrompts === count)
        .map((line) => (
          <li
            key={`caller-${line.id}`}
            className="max-w-[85%] self-end rounded-lg bg-blue-500 px-3 py-1.5 text-sm text-white"
          >
            {line.text}
          </li>
        ));
    session.prompts.forEach((prompt, index) => {
      conversation.push(...linesAt(index));
      const isPlaying = player.playing === index;
      conversation.push(
        // biome-ignore lint/suspicious/noArrayIndexKey: prompts only ever append
        <li key={`prompt-${index}`} className="flex max-w-[85%] items-start gap-1 self-start">
          <span className="rounded-lg bg-white px-3 py-1.5 text-sm shadow-sm">
            {prompt.text || '（音频文件）'}
          </span>
          {prompt.audioUrl !== null && (
            <Button
              type="text"
              size="small"
              aria-label={isPlaying ? `停止第 ${index + 1} 条提示音` : `播放第 ${index + 1} 条提示音`}
              icon={isPlaying ? <PauseCircleOutlined /> : <PlayCircleOutlined />}
              onClick={() => (isPlaying ? player.stop() : player.play([index]))}
            />
          )}
        </li>,
      );
    });
    conversation.push(...linesAt(session.prompts.length));
  }

  return (
    <Drawer
      title="模拟运行"
      open={open}
      onClose={onClose}
      size={440}
      // Not modal: the canvas stays visible and usable beside the panel.
      mask={false}
      extra={
        <span className="flex items-center gap-1 text-xs text-gray-500">
          <Switch size="small" aria-label="自动播放" checked={autoPlay} onChange={setAutoPlay} />
          自动播放
        </span>
      }
    >
      <div className="flex flex-col gap-4">
        <div className="flex items-center gap-2">
          <Input
            aria-label="主叫号码"
            size="small"
            className="!w-40"
            value={callerNumber}
            maxLength={20}
            onChange={(event) => setCallerNumber(event.target.value)}
          />
          <Button
            type="primary"
            size="small"
            loading={start.isPending}
            onClick={() => void begin().catch(() => undefined)}
          >
            {session ? '重新开始' : '开始模拟'}
          </Button>
        </div>
        {!session && (
          <p className="m-0 text-sm text-gray-500">
            用编辑器中的当前流程（含未保存的修改）模拟一通来电：你扮演来电者按键或说话，画布上会高亮走过的路径。
          </p>
        )}
        {session && startedWith !== graphKey && (
          <Alert type="info" showIcon title="流程已修改，点「重新开始」按最新内容模拟" />
        )}
        {inputError && <Alert type="error" showIcon title={inputError} />}

        {session && (
          <section aria-label="对话">
            <Heading>对话</Heading>
            <ol className="m-0 flex min-h-16 list-none flex-col gap-2 rounded-md bg-gray-50 p-2">
              {conversation.length > 0 ? (
                conversation
              ) : (
                <li className="self-center text-sm text-gray-400">（无提示音）</li>
              )}
            </ol>
          </section>
        )}

        {waiting && (
          <section
            aria-label="来电者输入"
            className="flex flex-col gap-2 rounded-md border border-blue-100 p-2"
          >
            <div className="flex items-center gap-2 text-sm">
              <Tag color="processing" className="!m-0">
                {WAITING_LABELS[waiting.kind]}
              </Tag>
              <span className="text-gray-600">
                {waitingNode ? flowNodeTitle(waitingNode) : waiting.nodeId}
              </span>
              <span className="ml-auto text-xs text-gray-400">{waiting.timeoutSec} 秒后超时</span>
            </div>
            {waiting.kind !== 'speech' && (
              <fieldset aria-label="拨号盘" className="m-0 grid grid-cols-3 gap-1 border-0 p-0">
                {DIAL_KEYS.map((key) => (
                  <Button key={key} disabled={busy} onClick={() => pressKey(key)}>
                    {key}
                  </Button>
                ))}
              </fieldset>
            )}
            <div className="flex gap-2">
              <Input
                aria-label={waiting.kind === 'digits' ? '按键' : '说的话'}
                value={text}
                disabled={busy}
                placeholder={waiting.kind === 'digits' ? '输入按键，如 123#' : '输入来电者说的话'}
                maxLength={200}
                onChange={(event) => setText(event.target.value)}
                onPressEnter={submitText}
              />
              <Button type="primary" disabled={busy || !text.trim()} onClick={submitText}>
                发送
              </Button>
            </div>
            <div className="flex gap-2">
              <Button
                size="small"
                disabled={busy}
                onClick={() =>
                  void answer({ kind: 'timeout' }, '（不作回应，等待超时）').catch(() => undefined)
                }
              >
                超时
              </Button>
              <Button
                size="small"
                danger
                disabled={busy}
                onClick={() => void answer({ kind: 'hangup' }, '（挂断）').catch(() => undefined)}
              >
                挂断
              </Button>
              {send.isPending && <span className="self-center text-xs text-gray-400">流程执行中…</span>}
            </div>
          </section>
        )}

        {session?.ended && (
          <Alert
            type="success"
            showIcon
            title={`模拟结束：${session.ended.reason || '通话结束'}`}
            description={endedAt ? `结束于「${endedAt}」` : undefined}
          />
        )}

        {session && (
          <>
            <section aria-label="执行步骤">
              <Heading>步骤记录</Heading>
              <StepLog steps={session.steps} graph={graph} />
            </section>
            <section aria-label="变量表">
              <Heading>变量</Heading>
              <VariablesTable variables={session.variables} />
            </section>
          </>
        )}
      </div>
      <audio ref={player.audioRef} onEnded={player.onEnded} className="hidden">
        <track kind="captions" />
      </audio>
    </Drawer>
  );
}
