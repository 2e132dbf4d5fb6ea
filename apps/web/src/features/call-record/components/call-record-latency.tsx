import type { TurnLatency } from '@callpilot/contracts';

type Stage = { label: string; color: string; ms: number };

/**
 * Retrieval, with the model's rewriting (before the search) and re-ranking (after it) drawn as
 * their own stages when they ran: they are part of retrievalMs, and usually most of it.
 */
function retrievalStages(latency: TurnLatency): Stage[] {
  const rewrite = latency.rewriteMs ?? 0;
  const rerank = latency.rerankMs ?? 0;
  return [
    ...(latency.rewriteMs !== undefined ? [{ label: '改写', color: 'bg-teal-400', ms: rewrite }] : []),
    { label: '检索', color: 'bg-emerald-400', ms: Math.max(0, latency.retrievalMs - rewrite - rerank) },
    ...(latency.rerankMs !== undefined ? [{ label: '重排', color: 'bg-lime-500', ms: rerank }] : []),
  ];
}

/**
 * The stages of a reply's delay. A real line measures from the audio, and the reply streams: the
 * caller waits for the VAD's hang, the final transcript, retrieval, the brain's first sentence,
 * its first audio and the packet going out (`replyStartMs` is that whole wait). A simulated call
 * speaks whole replies: recognition, retrieval, the whole brain, synthesis.
 */
function stagesOf(latency: TurnLatency): Stage[] {
  if (latency.replyStartMs !== undefined) {
    const known: Stage[] = [
      { label: '断句', color: 'bg-slate-400', ms: latency.endpointMs ?? 0 },
      { label: '识别', color: 'bg-sky-400', ms: latency.recognitionMs },
      ...retrievalStages(latency),
      { label: '首句', color: 'bg-indigo-400', ms: latency.firstSentenceMs ?? 0 },
      { label: '合成首包', color: 'bg-amber-400', ms: latency.firstAudioMs ?? 0 },
    ];
    const rest = latency.replyStartMs - known.reduce((sum, stage) => sum + Math.max(0, stage.ms), 0);
    return rest > 0 ? [...known, { label: '发送', color: 'bg-rose-300', ms: rest }] : known;
  }
  return [
    { label: '识别', color: 'bg-sky-400', ms: latency.recognitionMs },
    ...retrievalStages(latency),
    { label: '大模型', color: 'bg-indigo-400', ms: latency.brainMs },
    { label: '合成', color: 'bg-amber-400', ms: latency.synthesisMs },
  ];
}

export const latencyTotal = (latency: TurnLatency) =>
  latency.replyStartMs ?? stagesOf(latency).reduce((sum, stage) => sum + Math.max(0, stage.ms), 0);

const ms = (value: number) => `${Math.round(value)} ms`;

const FALLBACK_LABELS = {
  recognition: '识别已切换备用服务',
  synthesis: '合成已切换备用音色',
  brain: '模型未应答，已说兜底话术',
} as const;

/**
 * One reply's delay, stage after stage, drawn to a scale shared by the whole call (`scaleMs`) so
 * a slow turn stands out against the others.
 */
export function CallRecordLatency({ latency, scaleMs }: { latency: TurnLatency; scaleMs: number }) {
  const stages = stagesOf(latency);
  const total = latencyTotal(latency);
  const scale = Math.max(scaleMs, total, 1);
  return (
    <figure aria-label="响应耗时" className="flex flex-col gap-1 text-xs text-gray-500">
      <div className="flex h-2 w-full overflow-hidden rounded bg-gray-100">
        {stages.map((stage) => (
          <div
            key={stage.label}
            className={stage.color}
            style={{ width: `${(Math.max(0, stage.ms) / scale) * 100}%` }}
            title={`${stage.label} ${ms(stage.ms)}`}
          />
        ))}
      </div>
      <figcaption className="flex flex-wrap gap-x-3">
        {stages.map((stage) => (
          <span key={stage.label} className="inline-flex items-center gap-1">
            <i className={`inline-block h-2 w-2 rounded-sm ${stage.color}`} aria-hidden="true" />
            {stage.label} {ms(stage.ms)}
          </span>
        ))}
        <span>首字 {ms(latency.firstTokenMs)}</span>
        <span className="font-medium text-gray-700">
          {latency.replyStartMs !== undefined ? '开口延迟' : '合计'} {ms(total)}
        </span>
        {latency.fallbacks?.map((kind) => (
          <span key={kind} className="font-medium text-orange-600">
            {FALLBACK_LABELS[kind]}
            {kind === 'brain' && latency.brainError ? `（${latency.brainError}）` : ''}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
