import {
  type EndReason,
  RETRYABLE_END_REASONS,
  type RetryOutcome,
  type TaskSettings,
} from '@callpilot/contracts';
import {
  chinaDate,
  chinaDayStart,
  chinaMidnight,
  DAY_MS,
  firstMomentOfNextDay,
  inCallingWindow,
  nextCallingMoment,
} from './calendar';
import type { ContactOutcome, DailyCap, DialTask } from './ports';

/** What the contact becomes after a call ended with `endReason` on its `attempts`-th attempt. */
export function contactOutcome(
  settings: Pick<TaskSettings, 'retryRules'>,
  endReason: EndReason,
  attempts: number,
  now: number,
  timeScale = 1,
): ContactOutcome {
  if (!(RETRYABLE_END_REASONS as readonly string[]).includes(endReason)) {
    return { status: 'done', nextAttemptAt: null };
  }
  const rule = settings.retryRules[endReason as RetryOutcome];
  if (rule && attempts < 1 + rule.maxRetries) {
    return { status: 'retry', nextAttemptAt: new Date(now + (rule.intervalMinutes * 60_000) / timeScale) };
  }
  return { status: 'failed', nextAttemptAt: null };
}

export const callIdFor = (contactId: string, attempt: number) => `${contactId}.${attempt}`;

/** The most calls a task may make: contacts × (1 + the largest retry count). */
export const maxAttemptsOf = (settings: Pick<TaskSettings, 'retryRules'>) =>
  1 + Math.max(0, ...Object.values(settings.retryRules).map((r) => r?.maxRetries ?? 0));

/**
 * A 待开始 task waits for China-time midnight of its start date: that instant, or null once the
 * date has come.
 */
export const startWaitsUntil = (settings: TaskSettings, now: number): number | null =>
  chinaDate(now) < settings.startDate ? chinaMidnight(settings.startDate) : null;

/** Whether a task may dial now; when not, when its next calling window opens (null: none before its end date). */
export function callingWindow(
  settings: TaskSettings,
  now: number,
): { open: true } | { open: false; opensAt: number | null } {
  if (inCallingWindow(settings, now)) return { open: true };
  return { open: false, opensAt: nextCallingMoment(settings, now) };
}

/** The task's per-number daily cap for a claim made at `now`; null when it has none. */
export function dailyCapOf(settings: TaskSettings, now: number): DailyCap | null {
  if (settings.dailyCapPerNumber <= 0) return null;
  const today = chinaDayStart(now);
  return {
    perNumber: settings.dailyCapPerNumber,
    since: new Date(today),
    // No window left before the end date: the next day still ends the deferral.
    deferUntil: new Date(firstMomentOfNextDay(settings, now) ?? today + DAY_MS),
  };
}

/**
 * Round robin over each task's caller numbers (外显号码), so a task's calls spread over all of
 * them; a task without numbers shows the default one.
 */
export class CallerNumberRotation {
  private readonly turns = new Map<string, number>();

  constructor(private readonly fallback: string) {}

  next(task: DialTask): string {
    const numbers = task.settings.callerNumbers;
    if (numbers.length === 0) return this.fallback;
    const turn = this.turns.get(task.id) ?? 0;
    this.turns.set(task.id, turn + 1);
    return numbers[turn % numbers.length] as string;
  }
}
