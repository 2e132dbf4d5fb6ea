import type { KnowledgeBatchMetrics, KnowledgeBatchOutcome } from '@callpilot/contracts';

export const BATCH_OUTCOME_COLORS: Record<KnowledgeBatchOutcome, string> = {
  correct: 'success',
  wrong: 'error',
  refused: 'warning',
  refused_correctly: 'success',
  answered_unanswerable: 'error',
};

/** 回答正确率: answerable questions answered with the expected answer first. */
export const correctRate = (m: KnowledgeBatchMetrics) => (m.answerable === 0 ? 0 : m.correct / m.answerable);

export const formatPercent = (rate: number) => `${(rate * 100).toFixed(1)}%`;

/** A change between two runs, signed so "+" always reads as "went up". */
export function formatDelta(delta: number, kind: 'rate' | 'count'): string {
  const text = kind === 'rate' ? `${(Math.abs(delta) * 100).toFixed(1)}%` : String(Math.abs(delta));
  if (Math.abs(delta) < (kind === 'rate' ? 0.0005 : 1)) return kind === 'rate' ? '±0.0%' : '±0';
  return `${delta > 0 ? '+' : '-'}${text}`;
}

/** The figures every run shows, in the order an operator reads them; `better` says which way is good. */
export const BATCH_FIGURES: {
  key: string;
  label: string;
  kind: 'rate' | 'count';
  better: 'up' | 'down';
  value: (m: KnowledgeBatchMetrics) => number;
}[] = [
  { key: 'correct-rate', label: '回答正确率', kind: 'rate', better: 'up', value: correctRate },
  { key: 'recall-1', label: '召回@1', kind: 'rate', better: 'up', value: (m) => m.recallAt1 },
  { key: 'recall-3', label: '召回@3', kind: 'rate', better: 'up', value: (m) => m.recallAt3 },
  { key: 'wrong', label: '答错', kind: 'count', better: 'down', value: (m) => m.wrong },
  { key: 'refused', label: '应答未答', kind: 'count', better: 'down', value: (m) => m.refused },
  {
    key: 'refused-correctly',
    label: '正确拒答',
    kind: 'count',
    better: 'up',
    value: (m) => m.refusedCorrectly,
  },
  {
    key: 'answered-unanswerable',
    label: '不应答却答了',
    kind: 'count',
    better: 'down',
    value: (m) => m.answeredUnanswerable,
  },
];

export const formatFigure = (kind: 'rate' | 'count', value: number) =>
  kind === 'rate' ? formatPercent(value) : String(value);
