import type { CallDetail, CallEvent, CallTurn } from '@callpilot/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { Button, Result, Skeleton, Space, Tag } from 'antd';
import { useRef, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { ivrFlowEditPath } from '@/config/paths';
import { useCallEvents } from '@/entities/call/api/call-events';
import { callKeys } from '@/entities/call/api/call-query-keys';
import {
  type CallFilters,
  lastWeekCallFilters,
  withFilterDefaults,
} from '@/entities/call/utils/call-filters';
import { isLive } from '@/entities/call/utils/call-format';
import { callDetailPath, withBackFlag } from '@/entities/call/utils/call-paths';
import { parseListCache } from '@/lib/list-cache';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCall } from '../api/get-call';
import { useCallFlowGraph } from '../api/get-call-flow-graph';
import { useCallNeighbors } from '../api/get-call-neighbors';
import { useRecordingUrl } from '../api/get-recording-url';
import { CallRecordAnalysis } from '../components/call-record-analysis';
import { CallRecordFacts } from '../components/call-record-facts';
import { CallRecordFlowPath } from '../components/call-record-flow-path';
import { CallRecordSms } from '../components/call-record-sms';
import { CallRecordTranscript, turnAt } from '../components/call-record-transcript';
import { CallRecordWaveform, type WaveformHandle } from '../components/call-record-waveform';

/** Previous/next walk the list the user came from, so they use the filters it cached. */
function cachedListFilters(): CallFilters {
  const entry = parseListCache<Partial<CallFilters>>(useQueryCacheStore.getState().callRecordQueryCache);
  return entry
    ? withFilterDefaults({ sort: 'startedAt', order: 'desc', ...entry.filters })
    : lastWeekCallFilters();
}

function upsertTurn(turns: CallTurn[], turn: CallTurn): CallTurn[] {
  const rest = turns.filter((candidate) => candidate.index !== turn.index);
  return [...rest, turn].sort((a, b) => a.index - b.index);
}

function Recording({
  projectId,
  call,
  onTimeUpdate,
  waveformRef,
}: {
  projectId: string;
  call: CallDetail;
  onTimeUpdate: (seconds: number) => void;
  waveformRef: React.RefObject<WaveformHandle | null>;
}) {
  const queryClient = useQueryClient();
  const ready = call.recording === 'ready';
  const signed = useRecordingUrl(projectId, call.id, ready);

  if (isLive(call.status)) return <p className="text-sm text-gray-500">通话进行中，结束后可收听录音。</p>;
  if (call.recording === 'none') return <p className="text-sm text-gray-500">无录音（未接通）</p>;
  if (call.recording === 'failed')
    return <p className="text-sm text-red-500">{call.recordingError ?? '录音生成失败'}，无法播放。</p>;
  if (call.recording === 'pending') {
    return (
      <p className="text-sm text-gray-500">
        录音生成中
        <Button
          type="link"
          size="small"
          onClick={() =>
            void queryClient.invalidateQueries({ queryKey: callKeys.detail(projectId, call.id) })
          }
        >
          刷新
        </Button>
      </p>
    );
  }
  if (signed.isPending) return <Skeleton.Input active block />;
  if (!signed.data) return <p className="text-sm text-red-500">录音地址获取失败：{signed.error?.message}</p>;
  return (
    <CallRecordWaveform
      ref={waveformRef}
      url={signed.data.url}
      durationMs={call.recordingDurationMs}
      onTimeUpdate={onTimeUpdate}
      onReload={() => void signed.refetch()}
    />
  );
}

/** 流程 <name> v<N>, or 草稿测试 for a 模拟来电 of the draft; opens the editor while the flow exists. */
function FlowBadge({ flow }: { flow: NonNullable<CallDetail['flow']> }) {
  const name = `流程 ${flow.flowName}${flow.flowVersion === null ? '' : ` v${flow.flowVersion}`}`;
  return (
    <span className="flex items-center gap-2 text-sm">
      {flow.flowId ? <Link to={ivrFlowEditPath(flow.flowId)}>{name}</Link> : <span>{name}</span>}
      {flow.flowVersion === null && (
        <Tag color="orange" className="!m-0">
          草稿测试
        </Tag>
      )}
    </span>
  );
}

/** `?turn=N`: a turn's index, as the reports' links give it; anything else is ignored. */
export function turnParam(value: string | null): number | null {
  if (value === null || !/^\d{1,5}$/.test(value)) return null;
  return Number(value);
}

function CallRecordDetail({ projectId, call }: { projectId: string; call: CallDetail }) {
  const navigate = useNavigate();
  const [filters] = useState(cachedListFilters);
  const neighbors = useCallNeighbors(projectId, call.id, filters);
  const waveformRef = useRef<WaveformHandle | null>(null);
  const [activeIndex, setActiveIndex] = useState<number | null>(null);
  const live = isLive(call.status);
  const playable = call.recording === 'ready' && !live;
  const flowGraph = useCallFlowGraph(projectId, call.flow);
  const [search] = useSearchParams();
  const linkedTurn = turnParam(search.get('turn'));

  const back = () => navigate(withBackFlag(useQueryCacheStore.getState().callDetailBackUrl));
  const go = (id: string | null | undefined) => {
    if (id) navigate(callDetailPath(id));
  };

  return (
    <main className="flex flex-col gap-4 p-6">
      <header className="flex flex-wrap items-center justify-between gap-3">
        <div className="flex flex-wrap items-center gap-4">
          <h1 className="text-2xl font-semibold text-gray-900">通话详情</h1>
          {call.flow && <FlowBadge flow={call.flow} />}
        </div>
        <Space wrap>
          <Button onClick={back}>返回</Button>
          <Button disabled={!neighbors.data?.previousId} onClick={() => go(neighbors.data?.previousId)}>
            上一条
          </Button>
          <Button disabled={!neighbors.data?.nextId} onClick={() => go(neighbors.data?.nextId)}>
            下一条
          </Button>
        </Space>
      </header>
      <section aria-label="通话信息" className="rounded-lg border border-gray-200 bg-white p-4">
        <CallRecordFacts call={call} />
      </section>
      <section aria-label="录音" className="rounded-lg border border-gray-200 bg-white p-4">
        <Recording
          projectId={projectId}
          call={call}
          waveformRef={waveformRef}
          onTimeUpdate={(seconds) => setActiveIndex(turnAt(call.turns, seconds))}
        />
      </section>
      <div className="flex flex-col gap-4 lg:flex-row lg:items-start">
        <section
          aria-label="对话内容"
          className="flex min-w-0 flex-1 flex-col gap-3 rounded-lg border border-gray-200 bg-white p-4"
        >
          <h2 className="text-base font-semibold text-gray-900">对话内容</h2>
          <CallRecordTranscript
            turns={call.turns}
            activeIndex={activeIndex}
            linkedIndex={linkedTurn}
            live={live}
            {...(playable
              ? { onSeek: (turn: CallTurn) => waveformRef.current?.seek(turn.startMs / 1000) }
              : {})}
          />
        </section>
        <div className="flex w-full flex-col gap-4 lg:w-96 lg:shrink-0">
          {call.flow && (
            <section
              aria-label="流程路径"
              className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-4"
            >
              <h2 className="text-base font-semibold text-gray-900">流程路径</h2>
              <CallRecordFlowPath
                flow={call.flow}
                graph={flowGraph.data}
                ended={!live}
                callerHungUp={call.hangupBy === 'callee'}
                {...(playable
                  ? { onPlayVoicemail: (startMs: number) => waveformRef.current?.seek(startMs / 1000) }
                  : {})}
              />
            </section>
          )}
          <CallRecordAnalysis projectId={projectId} call={call} />
          <CallRecordSms projectId={projectId} callId={call.id} />
        </div>
      </div>
    </main>
  );
}

export function CallRecordDetailPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const { id } = useParams();
  const queryClient = useQueryClient();
  const call = useCall(projectId, id);
  const data = call.data;
  // After the call ends its analysis and recording still arrive as `updated` events.
  const following = Boolean(data && (isLive(data.status) || data.recording === 'pending'));

  useCallEvents(projectId, {
    ...(id ? { callId: id } : {}),
    enabled: following,
    onEvent: (event: CallEvent) => {
      if (!projectId || !id) return;
      const key = callKeys.detail(projectId, id);
      if (event.type === 'turn' && event.callId === id) {
        queryClient.setQueryData<CallDetail>(key, (current) =>
          current
            ? {
                ...current,
                turns: upsertTurn(current.turns, event.turn),
                turnCount: Math.max(current.turnCount, event.turn.index + 1),
              }
            : current,
        );
      } else if (event.type === 'answered' && event.callId === id) {
        queryClient.setQueryData<CallDetail>(key, (current) =>
          current ? { ...current, status: 'in_progress', answeredAt: event.answeredAt } : current,
        );
      } else if ((event.type === 'ended' || event.type === 'updated') && event.call.id === id) {
        // The summary lacks the analysis fields of the detail: fetch the whole record again.
        void queryClient.invalidateQueries({ queryKey: key });
      }
    },
  });

  if (call.isPending && projectId) return <Skeleton active className="p-6" />;
  if (!data || !projectId) {
    return <Result status="404" title="通话记录不存在或无权访问" subTitle={call.error?.message} />;
  }
  // Keyed by id: 上一条 / 下一条 open a fresh page (player, highlight, neighbours).
  return <CallRecordDetail key={data.id} projectId={projectId} call={data} />;
}
