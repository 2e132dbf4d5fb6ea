import {
  type CallEvent,
  type CallStatus,
  type CallSummary,
  type CallTurn,
  END_REASON_LABELS,
} from '@callpilot/contracts';
import { Alert, Button, Modal, Tag } from 'antd';
import { type ReactNode, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { followCall } from '../api/call-events';
import { getCall } from '../api/get-call';
import { useHangUpCall } from '../api/hang-up-call';
import { formatOffset } from '../utils/call-format';
import { callDetailPath } from '../utils/call-paths';
import { CallGradeTag } from './call-grade-tag';

type LiveCall = {
  callId: string;
  status: CallStatus;
  summary: CallSummary | null;
  turns: CallTurn[];
  /** The analysis (grade, summary) has arrived. */
  analyzed: boolean;
  following: boolean;
  error?: string;
};

function mergeTurns(current: CallTurn[], incoming: CallTurn[]): CallTurn[] {
  const byIndex = new Map(current.map((turn) => [turn.index, turn]));
  for (const turn of incoming) byIndex.set(turn.index, turn);
  return [...byIndex.values()].sort((a, b) => a.index - b.index);
}

function statusText(call: LiveCall): string {
  if (call.status === 'ringing') return '呼叫中';
  if (call.status === 'in_progress') return '通话中';
  const reason = call.summary?.endReason;
  return reason ? `已结束：${END_REASON_LABELS[reason]}` : '已结束';
}

function LiveCallView({ call, transcriptLabel }: { call: LiveCall; transcriptLabel: string }) {
  const listRef = useRef<HTMLOListElement>(null);
  // biome-ignore lint/correctness/useExhaustiveDependencies: follows the transcript as turns arrive
  useEffect(() => {
    listRef.current?.scrollTo?.({ top: listRef.current.scrollHeight });
  }, [call.turns.length]);
  const summary = call.summary;
  return (
    <div className="flex flex-col gap-3">
      <div className="flex flex-wrap items-center gap-2">
        <span className="text-sm text-gray-500">状态</span>
        <Tag color={call.status === 'ended' ? 'default' : 'processing'} aria-label="通话状态">
          {statusText(call)}
        </Tag>
        {call.following && <span className="text-xs text-gray-400">实时跟踪中…</span>}
        <Link className="ml-auto text-sm" to={callDetailPath(call.callId)}>
          查看通话记录
        </Link>
      </div>
      {call.error && <Alert type="error" showIcon title={call.error} />}
      <ol
        ref={listRef}
        aria-label={transcriptLabel}
        className="flex max-h-80 min-h-40 flex-col gap-2 overflow-y-auto rounded-md bg-gray-50 p-3"
      >
        {call.turns.length === 0 && (
          <li className="self-center text-sm text-gray-400">
            {call.status === 'ended' ? '没有对话内容' : '等待接通…'}
          </li>
        )}
        {call.turns.map((turn) => (
          <li
            key={turn.index}
            className={
              turn.speaker === 'assistant'
                ? 'max-w-[85%] self-start rounded-lg bg-white px-3 py-2 text-sm shadow-sm'
                : 'max-w-[85%] self-end rounded-lg bg-blue-500 px-3 py-2 text-sm text-white'
            }
          >
            <span className="mr-2 font-mono text-xs opacity-70">
              {turn.speaker === 'assistant' ? '小助手' : '客户'} {formatOffset(turn.startMs)}
            </span>
            {turn.text}
            {turn.dtmf && <span className="ml-1 text-xs opacity-80">（按键 {turn.dtmf}）</span>}
            {turn.interrupted && <span className="ml-1 text-xs opacity-80">（被打断）</span>}
          </li>
        ))}
      </ol>
      {call.analyzed && summary && (
        <section
          aria-label="通话结果"
          className="flex flex-col gap-1 rounded border border-gray-200 p-3 text-sm"
        >
          <div className="flex items-center gap-2">
            <span className="text-gray-500">意向等级</span>
            <CallGradeTag grade={summary.intentGrade} />
          </div>
          <p className="text-gray-700">{summary.summary || '暂无摘要'}</p>
        </section>
      )}
    </div>
  );
}

/**
 * The dialog of a simulated call (模拟通话, 模拟来电): first the caller's setup form (`children`),
 * then, once `onStart` has placed the call, the call live as a real one runs (ringing, the
 * carrier's outcome, turns, the analysis afterwards), with 挂断 while it lasts.
 */
export function LiveCallDialog({
  title,
  open,
  onClose,
  projectId,
  onStart,
  starting,
  startDisabled = false,
  children,
}: {
  title: string;
  open: boolean;
  onClose: () => void;
  projectId: string;
  /** Validates the setup and places the call: the new call's id, or undefined when nothing started. */
  onStart: () => Promise<string | undefined>;
  starting: boolean;
  startDisabled?: boolean;
  children: ReactNode;
}) {
  const [call, setCall] = useState<LiveCall | null>(null);
  const controllerRef = useRef<AbortController | null>(null);
  const hangUp = useHangUpCall(projectId);

  const stop = () => {
    controllerRef.current?.abort();
    controllerRef.current = null;
    setCall((current) => (current ? { ...current, following: false } : current));
  };

  useEffect(() => () => controllerRef.current?.abort(), []);

  const follow = (callId: string) => {
    const controller = new AbortController();
    controllerRef.current = controller;
    const update = (change: (current: LiveCall) => LiveCall) =>
      setCall((current) => (current && current.callId === callId ? change(current) : current));
    const onEvent = (event: CallEvent) => {
      switch (event.type) {
        case 'started':
          update((current) => ({ ...current, summary: event.call, status: event.call.status }));
          break;
        case 'answered':
          update((current) => ({ ...current, status: current.status === 'ended' ? 'ended' : 'in_progress' }));
          break;
        case 'turn':
          update((current) => ({ ...current, turns: mergeTurns(current.turns, [event.turn]) }));
          break;
        case 'ended':
          update((current) => ({ ...current, summary: event.call, status: 'ended' }));
          break;
        case 'updated':
          update((current) => ({
            ...current,
            summary: event.call,
            status: event.call.status,
            analyzed: true,
          }));
          break;
      }
    };
    followCall(projectId, callId, { signal: controller.signal, onEvent })
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        update((current) => ({ ...current, error: error instanceof Error ? error.message : '实时跟踪失败' }));
      })
      .finally(() => {
        if (controllerRef.current === controller) update((current) => ({ ...current, following: false }));
      });
    // The call starts before its stream is opened, so its first events (started, even the opening
    // line, or the whole of a call rejected at once) may have been sent already: catch up on them.
    getCall(projectId, callId, { signal: controller.signal, showError: false, showLoading: false })
      .then((detail) =>
        update((current) => ({
          ...current,
          turns: mergeTurns(detail.turns, current.turns),
          // Events already received are newer than this snapshot; it only fills gaps.
          summary: current.summary ?? detail,
          status: current.status === 'ringing' ? detail.status : current.status,
          analyzed: current.analyzed || detail.analysisBy !== null,
        })),
      )
      .catch(() => undefined);
  };

  const begin = async () => {
    const callId = await onStart();
    if (!callId) return;
    setCall({ callId, status: 'ringing', summary: null, turns: [], analyzed: false, following: true });
    follow(callId);
  };

  const close = () => {
    stop();
    // Reopening starts a new simulation; the finished one stays in the call records.
    setCall(null);
    onClose();
  };

  return (
    <Modal
      title={title}
      open={open}
      onCancel={close}
      width={640}
      destroyOnHidden
      footer={
        call ? (
          <div className="flex justify-end gap-2">
            {call.status !== 'ended' && (
              <Button danger loading={hangUp.isPending} onClick={() => hangUp.mutate(call.callId)}>
                挂断
              </Button>
            )}
            <Button onClick={stop} disabled={!call.following}>
              停止跟踪
            </Button>
            <Button
              onClick={() => {
                stop();
                setCall(null);
              }}
            >
              重新模拟
            </Button>
            <Button type="primary" onClick={close}>
              关闭
            </Button>
          </div>
        ) : (
          <div className="flex justify-end gap-2">
            <Button onClick={close}>取消</Button>
            <Button
              type="primary"
              loading={starting}
              disabled={startDisabled}
              onClick={() => void begin().catch(() => undefined)}
            >
              开始模拟
            </Button>
          </div>
        )
      }
    >
      {call ? <LiveCallView call={call} transcriptLabel={`${title}内容`} /> : children}
    </Modal>
  );
}
