import { INTENT_GRADE_LABELS, type IntentGrade } from '@callpilot/contracts';
import dayjs from 'dayjs';

/** Seconds as mm:ss (hours roll into the minutes: a call is never that long). */
export function formatTalkTime(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const minutes = Math.floor(whole / 60);
  return `${String(minutes).padStart(2, '0')}:${String(whole % 60).padStart(2, '0')}`;
}

/** A turn's offset from the answer, as mm:ss. */
export const formatOffset = (ms: number) => formatTalkTime(ms / 1000);

/** When a call started or ended, to the second: lists and the detail show the same. */
export function formatCallTime(iso: string | null | undefined): string {
  return iso ? dayjs(iso).format('YYYY-MM-DD HH:mm:ss') : '-';
}

/** The compact form for short lists (the dashboard's latest calls). */
export function formatShortCallTime(iso: string | null | undefined): string {
  return iso ? dayjs(iso).format('MM-DD HH:mm') : '-';
}

export const GRADE_COLORS: Record<IntentGrade, string> = { A: 'green', B: 'blue', C: 'default', D: 'red' };

export const gradeLabel = (grade: IntentGrade) => `${grade} ${INTENT_GRADE_LABELS[grade]}`;

/** Ringing counts as live too: what matters to a list is "this call is not over yet". */
export const isLive = (status: string) => status === 'ringing' || status === 'in_progress';
