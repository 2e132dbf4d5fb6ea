import { chinaTime } from '@/lib/format';

/**
 * A change against a comparison as the cards show it: ↑12.5% / ↓3% / 持平; null when there is no
 * base to compare with (nothing yesterday), which the card shows as "-" rather than ↑∞.
 */
export function formatChange(
  value: number,
  base: number,
): { text: string; direction: 'up' | 'down' | 'flat' } | null {
  if (base === 0) return null;
  const change = (value - base) / base;
  if (Math.abs(change) < 0.0005) return { text: '持平', direction: 'flat' };
  const pct = `${(Math.abs(change) * 100).toFixed(1).replace(/\.0$/, '')}%`;
  return change > 0 ? { text: `↑${pct}`, direction: 'up' } : { text: `↓${pct}`, direction: 'down' };
}

/** When a running task should be done: today's time alone, another day with its date. */
export function formatFinish(iso: string | null, now: number = Date.now()): string {
  if (!iso) return '预计完成时间未知';
  const at = chinaTime(iso);
  return at.isSame(chinaTime(now), 'day')
    ? `预计今天 ${at.format('HH:mm')} 完成`
    : `预计 ${at.format('MM-DD HH:mm')} 完成`;
}

export const formatMinutes = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(1));
