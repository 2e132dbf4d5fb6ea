import type { ReportFigure } from '@callpilot/contracts';
import { Link } from 'react-router';
import { cn } from '@/lib/utils';
import { changeRatio, type FigureKind, formatFigure, percent } from '../utils/report-format';
import { drillHref } from '../utils/report-range';

/**
 * A figure, its change against the previous period of the same length, and a link to the calls
 * behind it. Green or red says whether the change is good: more answered calls is, a longer wait
 * is not.
 */
export function ReportFigureCard({
  title,
  figure,
  kind = 'count',
  upIsGood = true,
}: {
  title: string;
  figure: ReportFigure;
  kind?: FigureKind;
  upIsGood?: boolean;
}) {
  const change = changeRatio(figure.value, figure.previous);
  const text = formatFigure(figure.value, kind);
  return (
    <div className="rounded-lg border border-gray-200 bg-white p-4">
      <div className="text-sm text-gray-500">{title}</div>
      <div className="mt-1 text-2xl font-semibold">
        {figure.drill ? (
          <Link
            to={drillHref(figure.drill)}
            aria-label={`${title} ${text}，查看通话`}
            className="text-inherit"
          >
            {text}
          </Link>
        ) : (
          text
        )}
      </div>
      <div className="mt-1 text-xs text-gray-500">
        较上期{' '}
        {change === null ? (
          <span title="上期无数据">—</span>
        ) : (
          <span
            className={cn(
              change === 0 ? 'text-gray-500' : change > 0 === upIsGood ? 'text-green-600' : 'text-red-600',
            )}
          >
            {change > 0 ? '↑' : change < 0 ? '↓' : ''}
            {percent(Math.abs(change))}
          </span>
        )}
      </div>
    </div>
  );
}
