import type { CallingWindow } from '@callpilot/contracts';
import chineseDays from 'chinese-days';

/** China has one time zone (Asia/Shanghai) and no daylight saving: UTC+8 all year. */
export const CHINA_OFFSET_MS = 8 * 3600_000;
export const DAY_MS = 24 * 3600_000;

export interface CallingCalendar {
  windows: CallingWindow[];
  skipHolidays: boolean;
  /** China-time dates (YYYY-MM-DD), inclusive. */
  startDate: string;
  endDate: string;
}

/** The China-time calendar date of an instant. */
export const chinaDate = (ms: number) => new Date(ms + CHINA_OFFSET_MS).toISOString().slice(0, 10);

/** The instant a China-time date begins. */
export const chinaMidnight = (date: string) => Date.parse(`${date}T00:00:00+08:00`);

/** The instant the China-time day of `ms` begins. */
export const chinaDayStart = (ms: number) =>
  Math.floor((ms + CHINA_OFFSET_MS) / DAY_MS) * DAY_MS - CHINA_OFFSET_MS;

/** ISO weekday (1 Monday … 7 Sunday) of a China-time date. */
export const isoWeekday = (date: string) => {
  const day = new Date(`${date}T00:00:00Z`).getUTCDay();
  return day === 0 ? 7 : day;
};

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

export type DayKind = 'normal' | 'holiday' | 'makeup';

/**
 * A public holiday (法定节假日, including the weekend days inside a holiday break) or a make-up
 * workday (调休, a weekend day that is worked). chinese-days calls plain weekends "holidays"
 * too, so a day only counts as one when it is named after a festival.
 */
export function dayKind(date: string): DayKind {
  const weekday = isoWeekday(date);
  let detail: { work: boolean; name: string };
  try {
    detail = chineseDays.getDayDetail(date);
  } catch {
    // Years the package does not know: plain weekdays and weekends.
    return 'normal';
  }
  const plainWeekend = detail.name === 'Saturday' || detail.name === 'Sunday';
  if (!detail.work && !plainWeekend) return 'holiday';
  if (detail.work && weekday >= 6) return 'makeup';
  return 'normal';
}

/** The windows (minutes of the day) that apply on a China-time date. */
export function windowsOn(calendar: CallingCalendar, date: string): Array<{ start: number; end: number }> {
  if (date < calendar.startDate || date > calendar.endDate) return [];
  const weekday = isoWeekday(date);
  const kind = calendar.skipHolidays ? dayKind(date) : 'normal';
  if (kind === 'holiday') return [];
  // A make-up workday replaces a weekday: the windows set for working days apply.
  const applies = (w: CallingWindow) =>
    w.days.includes(weekday) || (kind === 'makeup' && w.days.some((d) => d <= 5));
  return calendar.windows
    .filter(applies)
    .map((w) => ({ start: minutesOf(w.start), end: minutesOf(w.end) }))
    .sort((a, b) => a.start - b.start);
}

/** Whether `ms` falls inside a calling window (window end exclusive). */
export function inCallingWindow(calendar: CallingCalendar, ms: number): boolean {
  const date = chinaDate(ms);
  const minute = Math.floor((ms - chinaMidnight(date)) / 60_000);
  return windowsOn(calendar, date).some((w) => minute >= w.start && minute < w.end);
}

/**
 * The first moment at or after `ms` inside a calling window, or null when none is left before
 * the end date. Scans day by day (holiday breaks are at most a couple of weeks).
 */
export function nextCallingMoment(calendar: CallingCalendar, ms: number): number | null {
  if (inCallingWindow(calendar, ms)) return ms;
  let date = chinaDate(Math.max(ms, chinaMidnight(calendar.startDate)));
  for (let i = 0; i < 400 && date <= calendar.endDate; i++) {
    const midnight = chinaMidnight(date);
    for (const w of windowsOn(calendar, date)) {
      const start = midnight + w.start * 60_000;
      const end = midnight + w.end * 60_000;
      if (end > ms) return Math.max(start, ms);
    }
    date = chinaDate(midnight + DAY_MS + 3600_000);
  }
  return null;
}

/** The first window start on a later China-time day than `ms` (the daily cap's "tomorrow"). */
export function firstMomentOfNextDay(calendar: CallingCalendar, ms: number): number | null {
  return nextCallingMoment(calendar, chinaDayStart(ms) + DAY_MS);
}

/** Whether the task's calling period is over: the China-time date is past its end date. */
export const pastEndDate = (calendar: CallingCalendar, ms: number) => chinaDate(ms) > calendar.endDate;
