import { type ConditionRule, type FlowNodeOf, renderFlowTemplate } from '@callpilot/contracts';
import { type CallingCalendar, chinaDate, chinaMidnight, isoWeekday, windowsOn } from '../dialer/calendar';
import { callerInRegion, isLandlineNumber, isMobileNumber, nationalNumber } from './regions';

/**
 * The 条件分支 node's rules. Time rules read China time (UTC+8, no daylight saving) whatever the
 * server's zone, like the dialer's calling windows, and business hours share the dialer's
 * holiday calendar so a flow and a task agree on what a working day is.
 */

type Variables = Readonly<Record<string, string>>;

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Minute of the China-time day and the China-time date of an instant. */
export function chinaClock(ms: number) {
  const date = chinaDate(ms);
  return { date, minute: Math.floor((ms - chinaMidnight(date)) / 60_000), weekday: isoWeekday(date) };
}

/** [start, end) in minutes of the day; a start after the end spans midnight; equal: all day. */
function inSpan(minute: number, start: string, end: string): boolean {
  const s = minutesOf(start);
  const e = minutesOf(end);
  if (s === e) return true;
  return s < e ? minute >= s && minute < e : minute >= s || minute < e;
}

/** Regular expressions from flow settings, compiled once per process (a bad one never matches). */
const patterns = new Map<string, RegExp | null>();
export function flowPattern(source: string): RegExp | null {
  let compiled = patterns.get(source);
  if (compiled === undefined) {
    try {
      compiled = new RegExp(source, 'u');
    } catch {
      try {
        compiled = new RegExp(source);
      } catch {
        compiled = null;
      }
    }
    if (patterns.size > 2000) patterns.clear();
    patterns.set(source, compiled);
  }
  return compiled;
}

const numeric = (value: string): number | null => {
  const trimmed = value.trim();
  if (trimmed === '') return null;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : null;
};

function compareVariable(rule: Extract<ConditionRule, { kind: 'variable' }>, variables: Variables): boolean {
  const left = (variables[rule.variable] ?? '').trim();
  const right = renderFlowTemplate(rule.value, variables).trim();
  switch (rule.op) {
    case 'eq':
      return left === right;
    case 'neq':
      return left !== right;
    case 'contains':
      return left.includes(right);
    case 'not_contains':
      return !left.includes(right);
    case 'starts_with':
      return left.startsWith(right);
    case 'ends_with':
      return left.endsWith(right);
    case 'regex':
      return flowPattern(right)?.test(left) ?? false;
    case 'empty':
      return left === '';
    case 'not_empty':
      return left !== '';
    default: {
      // Numeric comparisons: a value that is not a number never satisfies them.
      const a = numeric(left);
      const b = numeric(right);
      if (a === null || b === null) return false;
      if (rule.op === 'gt') return a > b;
      if (rule.op === 'gte') return a >= b;
      if (rule.op === 'lt') return a < b;
      return a <= b;
    }
  }
}

function callerMatches(rule: Extract<ConditionRule, { kind: 'caller' }>, caller: string): boolean {
  switch (rule.op) {
    case 'prefix': {
      const number = nationalNumber(caller);
      return rule.value
        .split(/[,，、;；\s]+/u)
        .map((p) => p.trim())
        .filter(Boolean)
        .some((prefix) => number.startsWith(prefix) || caller.startsWith(prefix));
    }
    case 'regex': {
      const pattern = flowPattern(rule.value);
      return pattern ? pattern.test(caller) || pattern.test(nationalNumber(caller)) : false;
    }
    case 'mobile':
      return isMobileNumber(caller);
    case 'landline':
      return isLandlineNumber(caller);
    case 'region':
      return callerInRegion(caller, rule.value);
  }
}

/** Every day in range, all windows of that day, holidays per the rule. */
function inBusinessHours(rule: Extract<ConditionRule, { kind: 'business_hours' }>, ms: number): boolean {
  const calendar: CallingCalendar = {
    windows: rule.windows,
    skipHolidays: rule.holidays === 'closed',
    startDate: '0000-01-01',
    endDate: '9999-12-31',
  };
  const { date, minute } = chinaClock(ms);
  return windowsOn(calendar, date).some((w) => minute >= w.start && minute < w.end);
}

export function ruleMatches(rule: ConditionRule, variables: Variables, now: number): boolean {
  switch (rule.kind) {
    case 'variable':
      return compareVariable(rule, variables);
    case 'caller':
      return callerMatches(rule, variables.caller ?? '');
    case 'time':
      return inSpan(chinaClock(now).minute, rule.start, rule.end);
    case 'weekday':
      return rule.days.includes(chinaClock(now).weekday);
    case 'business_hours':
      return inBusinessHours(rule, now);
    case 'date_range': {
      const { date } = chinaClock(now);
      return date >= rule.from && date <= rule.to;
    }
  }
}

/** The first branch whose rules hold (a branch without rules never does); null: 其他. */
export function pickBranch(
  node: FlowNodeOf<'condition'>,
  variables: Variables,
  now: number,
): FlowNodeOf<'condition'>['data']['branches'][number] | null {
  for (const branch of node.data.branches) {
    if (branch.rules.length === 0) continue;
    const holds =
      branch.match === 'all'
        ? branch.rules.every((rule) => ruleMatches(rule, variables, now))
        : branch.rules.some((rule) => ruleMatches(rule, variables, now));
    if (holds) return branch;
  }
  return null;
}
