import SoundOutlined from '@ant-design/icons/SoundOutlined';
import {
  type AssistantDetail,
  type BrainAction,
  type ChatMessage,
  type IntentGrade,
  KNOWLEDGE_VERDICT_LABELS,
  type KnowledgeVerdict,
  referencedVariables,
  type TestChatEvent,
  type UsedSegment,
} from '@callpilot/contracts';
import { Button, Input, Segmented, Tag, Tooltip } from 'antd';
import { useCallback, useEffect, useRef, useState } from 'react';
import { GRADE_COLORS, gradeLabel } from '@/entities/call/utils/call-format';
import { previewTts } from '../api/preview-tts';
import { streamTestChat } from '../api/stream-test-chat';
import { useAudioPlayer } from '../hooks/use-audio-player';
import { BRAIN_ACTION_LABELS, BRAIN_MODE_LABELS } from '../utils/assistant-format';

type Latency = Extract<TestChatEvent, { type: 'done' }>['latency'];

type UserTurn = { id: number; role: 'user'; content: string };
type ReplyTurn = {
  id: number;
  role: 'assistant';
  content: string;
  streaming: boolean;
  segments: UsedSegment[];
  /** How the knowledge judged the question (absent: nothing searched, or an older server). */
  knowledge?: { verdict: KnowledgeVerdict; confidence: number };
  intent?: { grade: IntentGrade; reason: string };
  actions: { action: BrainAction; detail: string }[];
  latency?: Latency;
  error?: string;
};
type Turn = UserTurn | ReplyTurn;

function initialVariables(assistant: AssistantDetail): Record<string, string> {
  const values: Record<string, string> = {};
  for (const variable of assistant.config.variables) values[variable.name] = variable.sample;
  // A reference without a declared variable still gets a box, so the tester can see and fill it.
  const { openingLine, systemPrompt } = assistant.config;
  for (const name of referencedVariables(`${openingLine}\n${systemPrompt}`)) values[name] ??= '';
  return values;
}

const ms = (value: number) => `${Math.round(value)} ms`;

function ReplyDetails({ turn, onPlay, playing }: { turn: ReplyTurn; onPlay: () => void; playing: boolean }) {
  return (
    <div className="flex flex-col gap-1 pl-1 text-xs text-gray-500">
      {turn.segments.length > 0 && (
        <div className="flex flex-col gap-1">
          <span>引用知识（{turn.segments.length}）</span>
          {turn.segments.map((segment) => (
            <details key={segment.id} className="rounded border border-gray-200 bg-white px-2 py-1">
              <summary className="cursor-pointer">
                {segment.documentName} · 置信度 {segment.score.toFixed(2)}
              </summary>
              <p className="mt-1 whitespace-pre-wrap text-gray-700">{segment.content}</p>
            </details>
          ))}
        </div>
      )}
      {turn.knowledge && (
        <span className={turn.knowledge.verdict === 'answer' ? undefined : 'text-amber-600'}>
          置信度 {turn.knowledge.confidence.toFixed(2)} · {KNOWLEDGE_VERDICT_LABELS[turn.knowledge.verdict]}
        </span>
      )}
      <div className="flex flex-wrap items-center gap-2">
        {turn.intent && (
          <Tooltip title={turn.intent.reason}>
            <Tag color={GRADE_COLORS[turn.intent.grade]}>意向 {gradeLabel(turn.intent.grade)}</Tag>
          </Tooltip>
        )}
        {turn.latency && (
          <span>
            检索 {ms(turn.latency.retrievalMs)} · 首字 {ms(turn.latency.firstTokenMs)} · 总计{' '}
            {ms(turn.latency.totalMs)}
          </span>
        )}
        {!turn.streaming && !turn.error && turn.content && (
          <Button
            type="text"
            size="small"
            icon={<SoundOutlined />}
            aria-label="播放语音"
            loading={playing}
            onClick={onPlay}
          />
        )}
      </div>
    </div>
  );
}

/**
 * Chat as the callee against the saved draft: the opening line first, then a streamed reply per
 * message, with the knowledge used, the intent detected and each turn's latency.
 */
export function AssistantTestChat({
  projectId,
  assistant,
  modelName,
  dirty,
}: {
  projectId: string;
  assistant: AssistantDetail;
  /** Shown instead of 离线脚本模式 when a model profile is set. */
  modelName: string | undefined;
  dirty: boolean;
}) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [input, setInput] = useState('');
  const [ended, setEnded] = useState(false);
  const [busy, setBusy] = useState(false);
  const [mode, setMode] = useState<'llm' | 'script'>(assistant.brainMode);
  const [variables, setVariables] = useState(() => initialVariables(assistant));
  const [playingId, setPlayingId] = useState<number | null>(null);
  /** 0 tests the saved draft; a number tests that published version, as calls will run it. */
  const [version, setVersion] = useState(0);
  const controllerRef = useRef<AbortController | null>(null);
  const nextId = useRef(1);
  const variablesRef = useRef(variables);
  variablesRef.current = variables;
  const listRef = useRef<HTMLDivElement>(null);
  const player = useAudioPlayer();

  const runTurn = useCallback(
    async (history: ChatMessage[]) => {
      controllerRef.current?.abort();
      const controller = new AbortController();
      controllerRef.current = controller;
      const replyId = nextId.current++;
      const update = (change: (turn: ReplyTurn) => ReplyTurn) =>
        setTurns((current) =>
          current.map((turn) => (turn.id === replyId && turn.role === 'assistant' ? change(turn) : turn)),
        );
      setTurns((current) => [
        ...current,
        { id: replyId, role: 'assistant', content: '', streaming: true, segments: [], actions: [] },
      ]);
      setBusy(true);
      const onEvent = (event: TestChatEvent) => {
        switch (event.type) {
          case 'segments':
            update((turn) => ({
              ...turn,
              segments: event.segments,
              knowledge:
                event.verdict !== undefined && event.confidence !== undefined
                  ? { verdict: event.verdict, confidence: event.confidence }
                  : undefined,
            }));
            break;
          case 'delta':
            update((turn) => ({ ...turn, content: turn.content + event.text }));
            break;
          case 'intent':
            update((turn) => ({ ...turn, intent: { grade: event.grade, reason: event.reason } }));
            break;
          case 'action':
            update((turn) => ({
              ...turn,
              actions: [...turn.actions, { action: event.action, detail: event.detail }],
            }));
            if (event.action === 'end_call') setEnded(true);
            break;
          case 'done':
            setMode(event.mode);
            update((turn) => ({ ...turn, content: event.reply, latency: event.latency, streaming: false }));
            break;
          case 'error':
            update((turn) => ({ ...turn, error: event.message, streaming: false }));
            break;
        }
      };
      try {
        await streamTestChat(
          projectId,
          assistant.id,
          { messages: history, variables: variablesRef.current, ...(version > 0 ? { version } : {}) },
          {
            onEvent,
            signal: controller.signal,
          },
        );
        update((turn) => (turn.streaming ? { ...turn, streaming: false } : turn));
      } catch (error) {
        if (controller.signal.aborted) return;
        const message = error instanceof Error ? error.message : '对话失败';
        update((turn) => ({ ...turn, streaming: false, error: message }));
      } finally {
        if (controllerRef.current === controller) setBusy(false);
      }
    },
    [projectId, assistant.id, version],
  );

  const reset = useCallback(() => {
    controllerRef.current?.abort();
    setTurns([]);
    setEnded(false);
    setInput('');
    void runTurn([]);
  }, [runTurn]);

  // The conversation opens with the assistant's first line, as a call would.
  useEffect(() => {
    reset();
    return () => controllerRef.current?.abort();
  }, [reset]);

  // Follow the conversation as replies stream in.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs whenever the turns change
  useEffect(() => {
    listRef.current?.scrollTo?.({ top: listRef.current.scrollHeight });
  }, [turns]);

  const send = () => {
    const text = input.trim();
    if (!text || busy || ended) return;
    const history: ChatMessage[] = turns
      .filter((turn) => !(turn.role === 'assistant' && (turn.error || !turn.content)))
      .map((turn) => ({ role: turn.role, content: turn.content }));
    history.push({ role: 'user', content: text });
    setTurns((current) => [...current, { id: nextId.current++, role: 'user', content: text }]);
    setInput('');
    void runTurn(history);
  };

  const play = async (turn: ReplyTurn) => {
    setPlayingId(turn.id);
    try {
      await player.play(await previewTts(projectId, turn.content.slice(0, 500), assistant.config.voice));
    } finally {
      setPlayingId(null);
    }
  };

  const modeLabel = mode === 'script' ? BRAIN_MODE_LABELS.script : modelName || BRAIN_MODE_LABELS.llm;

  return (
    <section aria-label="测试对话" className="flex h-full min-h-0 flex-col gap-3">
      <div className="flex items-center justify-between gap-2">
        <div className="flex items-center gap-2">
          <h2 className="text-base font-semibold text-gray-900">测试对话</h2>
          <Tag color={mode === 'script' ? 'default' : 'blue'}>{modeLabel}</Tag>
        </div>
        <Button size="small" onClick={reset}>
          重置对话
        </Button>
      </div>
      {assistant.publishedVersion !== null && (
        <Segmented<number>
          size="small"
          value={version}
          onChange={setVersion}
          options={[
            { label: '测试草稿', value: 0 },
            { label: `测试 v${assistant.publishedVersion}`, value: assistant.publishedVersion },
          ]}
        />
      )}
      {dirty && version === 0 && (
        <p className="text-xs text-orange-500">
          有未保存的修改：测试对话使用已保存的配置，保存后重置对话即可生效。
        </p>
      )}
      {Object.keys(variables).length > 0 && (
        <details className="rounded border border-gray-200 px-3 py-2 text-sm" open>
          <summary className="cursor-pointer text-gray-700">变量示例值</summary>
          <div className="mt-2 grid grid-cols-[auto_1fr] items-center gap-2">
            {Object.entries(variables).map(([name, value]) => (
              <div key={name} className="contents">
                <span className="text-xs text-gray-500" aria-hidden="true">
                  {name}
                </span>
                <Input
                  size="small"
                  aria-label={`示例值 ${name}`}
                  value={value}
                  onChange={(event) =>
                    setVariables((current) => ({ ...current, [name]: event.target.value }))
                  }
                />
              </div>
            ))}
          </div>
        </details>
      )}
      <div
        ref={listRef}
        role="log"
        aria-label="对话内容"
        className="flex min-h-64 flex-1 flex-col gap-3 overflow-y-auto rounded-md bg-gray-50 p-3"
      >
        {turns.map((turn) =>
          turn.role === 'user' ? (
            <div
              key={turn.id}
              className="self-end max-w-[85%] rounded-lg bg-blue-500 px-3 py-2 text-sm text-white"
            >
              {turn.content}
            </div>
          ) : (
            <div key={turn.id} className="flex max-w-[90%] flex-col gap-1 self-start">
              <div className="rounded-lg bg-white px-3 py-2 text-sm text-gray-900 shadow-sm">
                {turn.content || (turn.streaming ? <span className="text-gray-400">正在回复…</span> : null)}
                {turn.error && <span className="text-red-500">{turn.error}</span>}
              </div>
              <ReplyDetails turn={turn} playing={playingId === turn.id} onPlay={() => play(turn)} />
              {turn.actions.map(({ action, detail }) => (
                <div key={`${action}-${detail}`} role="note" className="self-center text-xs text-gray-500">
                  —— {BRAIN_ACTION_LABELS[action]}
                  {detail ? `：${detail}` : ''} ——
                </div>
              ))}
            </div>
          ),
        )}
      </div>
      {/* biome-ignore lint/a11y/useMediaCaption: synthesised speech of a reply shown in the chat */}
      <audio ref={player.audioRef} src={player.src} className="hidden" />
      <div className="flex gap-2">
        <Input.TextArea
          aria-label="以客户身份输入"
          autoSize={{ minRows: 1, maxRows: 4 }}
          placeholder={ended ? '通话已结束，请重置对话' : '以客户身份说点什么，回车发送'}
          disabled={ended}
          value={input}
          maxLength={2000}
          onChange={(event) => setInput(event.target.value)}
          onPressEnter={(event) => {
            if (event.shiftKey) return;
            event.preventDefault();
            send();
          }}
        />
        <Button type="primary" onClick={send} disabled={ended || busy || !input.trim()}>
          发送
        </Button>
      </div>
    </section>
  );
}
