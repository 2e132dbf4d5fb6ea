import dayjs, { type Dayjs } from 'dayjs';

/** A share as a percentage with at most one decimal (40%, 38.5%); '-' when there is nothing to divide. */
export function formatPercent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined) return '-';
  return `${(rate * 100).toFixed(1).replace(/\.0$/, '')}%`;
}

/** Fen are integers; formatting them with integer arithmetic avoids 0.1 + 0.2 style drift. */
export function formatFen(fen: number): string {
  const sign = fen < 0 ? '-' : '';
  const abs = Math.abs(Math.trunc(fen));
  const yuan = Math.floor(abs / 100).toLocaleString('zh-CN');
  const cents = String(abs % 100).padStart(2, '0');
  return `${sign}¥${yuan}.${cents}`;
}

/**
 * An instant as China's wall clock (UTC+8, no daylight saving), wherever the browser is: the
 * product's days and calling windows are China time. Read it with dayjs's format/isSame only.
 */
export function chinaTime(at: string | number | Date): Dayjs {
  return dayjs(new Date(new Date(at).getTime() + 8 * 3_600_000).toISOString().slice(0, 19));
}
