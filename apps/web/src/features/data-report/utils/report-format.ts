/** How a figure reads: a count, a 0-1 rate shown as %, or a duration in seconds. */
export type FigureKind = 'count' | 'rate' | 'seconds' | 'ms';

export function formatFigure(value: number, kind: FigureKind): string {
  switch (kind) {
    case 'rate':
      return `${(value * 100).toFixed(1)}%`;
    case 'seconds':
      return `${value.toFixed(value < 10 && !Number.isInteger(value) ? 1 : 0)} 秒`;
    case 'ms':
      return `${Math.round(value)} ms`;
    default:
      return value.toLocaleString('zh-CN');
  }
}

/**
 * Change against the previous period, as a fraction; null when the previous period had nothing,
 * where a percentage would be infinite or meaningless.
 */
export function changeRatio(value: number, previous: number): number | null {
  if (previous === 0) return null;
  return (value - previous) / previous;
}

export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)}%`;
