import type { IntentGrade, TaskCounts, TaskState } from '@callpilot/contracts';
import dayjs from 'dayjs';

export const TASK_STATE_COLORS: Record<TaskState, string> = {
  draft: 'default',
  pending: 'gold',
  running: 'processing',
  paused: 'orange',
  completed: 'success',
  stopped: 'red',
};

export const GRADE_BAR_COLORS: Record<IntentGrade, string> = {
  A: '#52c41a',
  B: '#4D8EFF',
  C: '#bfbfbf',
  D: '#FF5656',
};
export const GRADES: IntentGrade[] = ['A', 'B', 'C', 'D'];

/**
 * Answered calls over calls placed. The list, the detail and its live events only carry counts,
 * so all three compute the rate the same way from them.
 */
export function answerRateOf(counts: Pick<TaskCounts, 'answered' | 'calls'>): number | null {
  return counts.calls > 0 ? counts.answered / counts.calls : null;
}

/** Share of graded contacts with intent A or B; null before anything was graded. */
export function abShareOf(byGrade: Partial<Record<IntentGrade, number>>): number | null {
  const graded = GRADES.reduce((sum, grade) => sum + (byGrade[grade] ?? 0), 0);
  return graded > 0 ? ((byGrade.A ?? 0) + (byGrade.B ?? 0)) / graded : null;
}

/** A rough length: 2 天 3 小时, 3 小时 20 分钟, 12 分钟, 不到 1 分钟. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '-';
  const minutes = Math.round(seconds / 60);
  if (minutes < 1) return '不到 1 分钟';
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const rest = minutes % 60;
  if (days > 0) return hours > 0 ? `${days} 天 ${hours} 小时` : `${days} 天`;
  if (hours > 0) return rest > 0 ? `${hours} 小时 ${rest} 分钟` : `${hours} 小时`;
  return `${rest} 分钟`;
}

export function formatDateTime(iso: string | null | undefined): string {
  return iso ? dayjs(iso).format('YYYY-MM-DD HH:mm') : '-';
}

export function waitingText(waitingUntil: string): string {
  return `等待中：将于 ${dayjs(waitingUntil).format('MM-DD HH:mm')} 开始呼叫`;
}

const WEEKDAY_NAMES = ['一', '二', '三', '四', '五', '六', '日'];
export const weekdayName = (day: number) => `周${WEEKDAY_NAMES[day - 1] ?? '?'}`;

/** 周一至周五, or 周一、周三、周六 when the days are not a run. */
export function formatDays(days: number[]): string {
  const sorted = [...new Set(days)].sort((a, b) => a - b);
  if (sorted.length === 7) return '每天';
  const first = sorted[0];
  const last = sorted.at(-1);
  const isRun = first !== undefined && last !== undefined && last - first === sorted.length - 1;
  if (isRun && sorted.length >= 3) return `${weekdayName(first)}至${weekdayName(last)}`;
  return sorted.map(weekdayName).join('、');
}
