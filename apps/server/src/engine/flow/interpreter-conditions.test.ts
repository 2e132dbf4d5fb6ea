import { describe, expect, it } from 'vitest';
import { buildFlow, runScripted } from './testing/flows';

/**
 * 条件分支 through the interpreter: a flow whose condition node has the rules under test as its
 * first branch (or several branches), run at a China time with a caller number.
 */
async function branchTaken(
  branches: Array<{ id: string; name?: string; match?: 'all' | 'any'; rules: unknown[] }>,
  options: { at?: string; caller?: string; variables?: Record<string, string> } = {},
) {
  const flow = buildFlow(
    [
      ['start', 'start'],
      [
        'check',
        'condition',
        { branches: branches.map((b) => ({ name: b.name ?? b.id, match: 'all', ...b })) },
        '判断',
      ],
      ['done', 'hangup'],
    ],
    [
      ['start', 'next', 'check'],
      ['check', 'else', 'done'],
      ...branches.map((b): [string, string, string] => ['check', `branch:${b.id}`, 'done']),
    ],
  );
  const { result } = await runScripted({ flow, ...options });
  const step = result.path.find((s) => s.nodeId === 'check');
  return { exit: step?.exit, detail: step?.detail };
}

const yes = async (rules: unknown[], options: Parameters<typeof branchTaken>[1] = {}) =>
  (await branchTaken([{ id: 'yes', rules }], options)).exit === 'branch:yes';

describe('condition: variables', () => {
  const vars = { level: 'VIP 金卡', count: '10', empty: '', other: '10' };
  const rule = (op: string, value = '', variable = 'level') => [{ kind: 'variable', variable, op, value }];

  it.each([
    ['eq', 'VIP 金卡', true],
    ['eq', 'VIP', false],
    ['neq', 'VIP', true],
    ['contains', '金卡', true],
    ['not_contains', '金卡', false],
    ['starts_with', 'VIP', true],
    ['ends_with', '银卡', false],
    ['regex', '^VIP\\s', true],
    ['regex', '([', false],
  ])('%s %s → %s', async (op, value, expected) => {
    expect(await yes(rule(op, value), { variables: vars })).toBe(expected);
  });

  it('empty and not_empty; an unset variable is empty', async () => {
    expect(await yes(rule('empty', '', 'empty'), { variables: vars })).toBe(true);
    expect(await yes(rule('empty', '', 'never_set'), { variables: vars })).toBe(true);
    expect(await yes(rule('not_empty', '', 'level'), { variables: vars })).toBe(true);
  });

  it('compares numbers as numbers (10 > 9), never a word with a number', async () => {
    expect(await yes(rule('gt', '9', 'count'), { variables: vars })).toBe(true);
    expect(await yes(rule('lt', '9', 'count'), { variables: vars })).toBe(false);
    expect(await yes(rule('gte', '{{other}}', 'count'), { variables: vars })).toBe(true);
    expect(await yes(rule('lte', '10.5', 'count'), { variables: vars })).toBe(true);
    expect(await yes(rule('gt', '1', 'level'), { variables: vars })).toBe(false);
    expect(await yes(rule('lt', '1', 'level'), { variables: vars })).toBe(false);
  });

  it('all needs every rule, any one of them; the first branch that holds wins; else otherwise', async () => {
    const both = [
      { kind: 'variable', variable: 'level', op: 'contains', value: 'VIP' },
      { kind: 'variable', variable: 'count', op: 'gt', value: '100' },
    ];
    expect(await branchTaken([{ id: 'a', match: 'all', rules: both }], { variables: vars })).toEqual({
      exit: 'else',
      detail: '均未命中，走「其他」',
    });
    expect((await branchTaken([{ id: 'a', match: 'any', rules: both }], { variables: vars })).exit).toBe(
      'branch:a',
    );
    const first = await branchTaken(
      [
        { id: 'none', rules: [] },
        { id: 'vip', name: 'VIP 客户', rules: [both[0]] },
        { id: 'also', rules: [both[0]] },
      ],
      { variables: vars },
    );
    expect(first).toEqual({ exit: 'branch:vip', detail: '命中「VIP 客户」' });
  });
});

describe('condition: the caller number', () => {
  const callerRule = (op: string, value = '') => [{ kind: 'caller', op, value }];

  it('prefix (several, comma-separated) and regex', async () => {
    expect(await yes(callerRule('prefix', '139, 138'), { caller: '13800138000' })).toBe(true);
    expect(await yes(callerRule('prefix', '139'), { caller: '13800138000' })).toBe(false);
    expect(await yes(callerRule('regex', '^1380013'), { caller: '13800138000' })).toBe(true);
    // The country code is dropped before comparing.
    expect(await yes(callerRule('prefix', '138'), { caller: '+86 138 0013 8000' })).toBe(true);
  });

  it('mobile and landline', async () => {
    expect(await yes(callerRule('mobile'), { caller: '13800138000' })).toBe(true);
    expect(await yes(callerRule('mobile'), { caller: '02161234567' })).toBe(false);
    expect(await yes(callerRule('landline'), { caller: '02161234567' })).toBe(true);
    expect(await yes(callerRule('landline'), { caller: '+86 10 6552 9988' })).toBe(true);
    expect(await yes(callerRule('landline'), { caller: '13800138000' })).toBe(false);
  });

  it.each([
    ['01065529988', '北京', true],
    ['+86 10 6552 9988', '北京市', true],
    ['02161234567', '上海', true],
    ['02088889999', '广东', true],
    ['02088889999', '广州', true],
    ['075526668888', '深圳', true],
    ['075526668888', '广东省', true],
    ['075526668888', '北京,上海', false],
    ['057188889999', '浙江、江苏', true],
    ['087165551234', '云南', true],
    ['099112345678', '新疆', true],
    ['089112345678', '西藏自治区', true],
    ['047112345678', '内蒙古', true],
    ['089866661234', '海南', true],
    ['02787654321', '湖北', true],
    ['02787654321', '湖南', false],
  ])('%s in %s → %s', async (number, region, expected) => {
    expect(await yes(callerRule('region', region), { caller: number })).toBe(expected);
  });

  it('a mobile number is in no region (mobile segments are not mapped)', async () => {
    expect(await yes(callerRule('region', '北京'), { caller: '13800138000' })).toBe(false);
  });
});

describe('condition: time, weekdays, business hours and dates (China time)', () => {
  const time = (start: string, end: string) => [{ kind: 'time', start, end }];

  it('a time span includes its start and excludes its end', async () => {
    expect(await yes(time('09:00', '18:00'), { at: '2026-11-18T09:00' })).toBe(true);
    expect(await yes(time('09:00', '18:00'), { at: '2026-11-18T17:59' })).toBe(true);
    expect(await yes(time('09:00', '18:00'), { at: '2026-11-18T18:00' })).toBe(false);
  });

  it('a span whose start is after its end runs across midnight', async () => {
    expect(await yes(time('22:00', '06:00'), { at: '2026-11-18T23:30' })).toBe(true);
    expect(await yes(time('22:00', '06:00'), { at: '2026-11-18T05:59' })).toBe(true);
    expect(await yes(time('22:00', '06:00'), { at: '2026-11-18T06:00' })).toBe(false);
    expect(await yes(time('22:00', '06:00'), { at: '2026-11-18T12:00' })).toBe(false);
  });

  it('weekdays are ISO (1 Monday … 7 Sunday) of the China-time date', async () => {
    const workdays = [{ kind: 'weekday', days: [1, 2, 3, 4, 5] }];
    expect(await yes(workdays, { at: '2026-11-18T10:00' })).toBe(true); // Wednesday
    expect(await yes(workdays, { at: '2026-11-21T10:00' })).toBe(false); // Saturday
    // Sunday 00:30 in China is still Saturday in UTC.
    expect(await yes([{ kind: 'weekday', days: [7] }], { at: '2026-11-22T00:30' })).toBe(true);
  });

  const hours = (holidays: 'closed' | 'ignore' = 'closed') => [
    {
      kind: 'business_hours',
      windows: [
        { days: [1, 2, 3, 4, 5], start: '09:00', end: '18:00' },
        { days: [6], start: '10:00', end: '12:00' },
      ],
      holidays,
    },
  ];

  it('business hours: the windows of the weekday', async () => {
    expect(await yes(hours(), { at: '2026-11-18T10:00' })).toBe(true);
    expect(await yes(hours(), { at: '2026-11-18T19:00' })).toBe(false);
    expect(await yes(hours(), { at: '2026-11-21T11:00' })).toBe(true); // Saturday morning window
    expect(await yes(hours(), { at: '2026-11-22T11:00' })).toBe(false); // Sunday
  });

  it('business hours: closed on a public holiday (国庆 2026-10-01, a Thursday) unless holidays are ignored', async () => {
    expect(await yes(hours(), { at: '2026-10-01T10:00' })).toBe(false);
    expect(await yes(hours('ignore'), { at: '2026-10-01T10:00' })).toBe(true);
  });

  it('business hours: a 调休 Saturday (2026-10-10) is open with the weekday windows', async () => {
    expect(await yes(hours(), { at: '2026-10-10T15:00' })).toBe(true);
    // Ignoring the calendar, it is a plain Saturday: only the Saturday window applies.
    expect(await yes(hours('ignore'), { at: '2026-10-10T15:00' })).toBe(false);
  });

  it('date ranges include both ends', async () => {
    const range = [{ kind: 'date_range', from: '2026-12-24', to: '2026-12-26' }];
    expect(await yes(range, { at: '2026-12-24T00:00' })).toBe(true);
    expect(await yes(range, { at: '2026-12-26T23:59' })).toBe(true);
    expect(await yes(range, { at: '2026-12-27T00:00' })).toBe(false);
    expect(await yes(range, { at: '2026-12-23T23:59' })).toBe(false);
  });
});
