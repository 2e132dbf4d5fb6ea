import type { TurnLatency } from '@callpilot/contracts';

const STAGES: { key: keyof TurnLatency; label: string; color: string }[] = [
  { key: 'recognitionMs', label: '识别', color: 'bg-sky-400' },
  { key: 'retrievalMs', label: '检索', color: 'bg-emerald-400' },
  { key: 'brainMs', label: '大模型', color: 'bg-indigo-400' },
  { key: 'synthesisMs', label: '合成', color: 'bg-amber-400' },
];

export const latencyTotal = (latency: TurnLatency) =>
  STAGES.reduce((sum, stage) => sum + Math.max(0, latency[stage.key]), 0);

const ms = (value: number) => `${Math.round(value)} ms`;

/**
 * One reply's delay, stage after stage, drawn to a scale shared by the whole call (`scaleMs`) so
 * a slow turn stands out against the others.
 */
export function CallRecordLatency({ latency, scaleMs }: { latency: TurnLatency; scaleMs: number }) {
  const total = latencyTotal(latency);
  const scale = Math.max(scaleMs, total, 1);
  return (
    <figure aria-label="响应耗时" className="flex flex-col gap-1 text-xs text-gray-500">
      <div className="flex h-2 w-full overflow-hidden rounded bg-gray-100">
        {STAGES.map((stage) => (
          <div
            key={stage.key}
            className={stage.color}
            style={{ width: `${(Math.max(0, latency[stage.key]) / scale) * 100}%` }}
            title={`${stage.label} ${ms(latency[stage.key])}`}
          />
        ))}
      </div>
      <figcaption className="flex flex-wrap gap-x-3">
        {STAGES.map((stage) => (
          <span key={stage.key} className="inline-flex items-center gap-1">
            <i className={`inline-block h-2 w-2 rounded-sm ${stage.color}`} aria-hidden="true" />
            {stage.label} {ms(latency[stage.key])}
          </span>
        ))}
        <span>首字 {ms(latency.firstTokenMs)}</span>
        <span className="font-medium text-gray-700">合计 {ms(total)}</span>
      </figcaption>
    </figure>
  );
}
