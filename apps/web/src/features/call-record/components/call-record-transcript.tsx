import type { CallTurn, UsedSegment } from '@callpilot/contracts';
import { Empty, Tag } from 'antd';
import { useEffect, useRef } from 'react';
import { formatOffset } from '@/entities/call/utils/call-format';
import { cn } from '@/lib/utils';
import { CallRecordLatency, latencyTotal } from './call-record-latency';

type Props = {
  turns: CallTurn[];
  /** The turn under the playhead, highlighted. */
  activeIndex: number | null;
  /** Absent while there is no playable recording: the turns are then not clickable. */
  onSeek?: (turn: CallTurn) => void;
  live: boolean;
  /**
   * The turn a link pointed at (`?turn=N`, e.g. a knowledge gap's example question): scrolled
   * into view, focused and marked, so the reader lands on the words the link was about.
   */
  linkedIndex?: number | null;
};

/**
 * The knowledge behind a reply: the segments it answered from; or, for a question the knowledge
 * refused, the refusal and the nearest candidate it would not trust (segments marked used: false).
 */
function TurnKnowledge({ segments }: { segments: UsedSegment[] }) {
  const used = segments.filter((segment) => segment.used !== false);
  const nearest = segments.find((segment) => segment.used === false);
  if (used.length > 0) {
    return (
      <details className="w-full rounded border border-gray-200 bg-white px-2 py-1 text-xs text-gray-600">
        <summary className="cursor-pointer">引用知识（{used.length}）</summary>
        <ul className="mt-1 flex flex-col gap-1">
          {used.map((segment) => (
            <li key={segment.id}>
              <p className="text-gray-500">
                {segment.documentName} · 置信度 {segment.score.toFixed(2)}
              </p>
              <p className="whitespace-pre-wrap text-gray-700">{segment.content}</p>
            </li>
          ))}
        </ul>
      </details>
    );
  }
  if (!nearest) return null;
  return (
    <details className="w-full rounded border border-amber-200 bg-amber-50 px-2 py-1 text-xs text-amber-800">
      <summary className="cursor-pointer">知识库拒答（置信度 {nearest.score.toFixed(2)}）</summary>
      <p className="mt-1 text-gray-500">最接近的内容：{nearest.documentName}</p>
      <p className="whitespace-pre-wrap text-gray-700">{nearest.content}</p>
    </details>
  );
}

/** Which turn is being heard at `seconds` into the recording, if any. */
export function turnAt(turns: CallTurn[], seconds: number): number | null {
  const ms = seconds * 1000;
  const turn = turns.find((candidate) => ms >= candidate.startMs && ms < candidate.endMs);
  return turn ? turn.index : null;
}

export function CallRecordTranscript({ turns, activeIndex, onSeek, live, linkedIndex = null }: Props) {
  const linked = useRef<HTMLLIElement | null>(null);
  // Once per linked turn: a live call's later turns must not pull the reader back to it.
  const shown = useRef<number | null>(null);
  const linkedPresent = turns.some((turn) => turn.index === linkedIndex);
  useEffect(() => {
    const element = linked.current;
    if (!linkedPresent || !element || shown.current === linkedIndex) return;
    shown.current = linkedIndex;
    element.scrollIntoView?.({ block: 'center' });
    element.focus({ preventScroll: true });
  }, [linkedIndex, linkedPresent]);

  if (turns.length === 0) {
    return <Empty description={live ? '等待对话开始…' : '没有对话内容'} />;
  }
  const scaleMs = Math.max(0, ...turns.map((turn) => (turn.latency ? latencyTotal(turn.latency) : 0)));
  return (
    <ol aria-label="对话记录" className="flex flex-col gap-4">
      {turns.map((turn) => {
        const mine = turn.speaker === 'assistant';
        const active = turn.index === activeIndex;
        const isLinked = turn.index === linkedIndex;
        const bubble = (
          <>
            <span className="mb-1 flex items-center gap-2 text-xs text-gray-500">
              <span>{mine ? '小助手' : '客户'}</span>
              <span className="font-mono">{formatOffset(turn.startMs)}</span>
              {turn.interrupted && (
                <Tag color="orange" className="!m-0">
                  被打断
                </Tag>
              )}
            </span>
            <span className="whitespace-pre-wrap">{turn.text || (turn.dtmf ? '' : '（无声）')}</span>
            {turn.dtmf && <span className="mt-1 block text-xs text-gray-600">按键：{turn.dtmf}</span>}
          </>
        );
        const bubbleClass = cn(
          'flex max-w-full flex-col rounded-lg px-3 py-2 text-left text-sm',
          mine ? 'bg-blue-50 text-gray-900' : 'bg-gray-100 text-gray-900',
          isLinked && 'ring-2 ring-amber-400',
          active && 'ring-2 ring-blue-400',
        );
        return (
          <li
            key={turn.index}
            ref={isLinked ? linked : undefined}
            tabIndex={isLinked ? -1 : undefined}
            // The turn playing is "the current one"; the linked one is "where you are" until then.
            aria-current={active ? 'true' : isLinked ? 'location' : undefined}
            className={cn(
              'flex max-w-[85%] flex-col gap-1 outline-none',
              mine ? 'self-start' : 'self-end items-end',
            )}
          >
            {onSeek ? (
              <button
                type="button"
                className={cn(bubbleClass, 'cursor-pointer hover:ring-1 hover:ring-blue-300')}
                title="从这里播放"
                onClick={() => onSeek(turn)}
              >
                {bubble}
              </button>
            ) : (
              <div className={bubbleClass}>{bubble}</div>
            )}
            {turn.latency && (
              <div className="w-72 max-w-full">
                <CallRecordLatency latency={turn.latency} scaleMs={scaleMs} />
              </div>
            )}
            <TurnKnowledge segments={turn.segments} />
          </li>
        );
      })}
    </ol>
  );
}
