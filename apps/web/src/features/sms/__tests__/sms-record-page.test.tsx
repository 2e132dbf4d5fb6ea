import type { SmsMessage, SmsStatistics } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { makeTemplate, renderSms, signIn, TEMPLATES } from './sms-test-data';

const MESSAGES = '/api/project/p1/sms/messages';
const STATISTICS = '/api/project/p1/sms/statistics';

let server: ReturnType<typeof startFakeServer> | undefined;
beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
});

function makeMessage(overrides: Partial<SmsMessage> = {}): SmsMessage {
  return {
    id: 'm1',
    phone: '13800000001',
    signatureName: '云呼科技',
    templateId: 't1',
    templateName: '到店提醒',
    templateType: 'notification',
    variables: {},
    content: '【云呼科技】您预约的课程将于明天上午十点开始，请准时到店。',
    parts: 1,
    provider: 'outbox',
    providerMessageId: 'outbox-1',
    status: 'delivered',
    errorCode: null,
    errorMessage: null,
    timeline: [],
    source: 'single',
    callId: null,
    taskId: null,
    batchId: null,
    ruleId: null,
    sendAfter: '2026-03-02T02:00:00.000Z',
    createdAt: '2026-03-02T02:00:00.000Z',
    submittedAt: null,
    finishedAt: null,
    ...overrides,
  };
}

const FAILED = makeMessage({
  id: 'm2',
  phone: '13900000002',
  status: 'failed',
  errorCode: 'MK:0001',
  errorMessage: '用户停机',
  source: 'follow_up',
  callId: 'call-9',
  timeline: [
    { status: 'queued', at: '2026-03-02T02:00:00.000Z', detail: null },
    { status: 'submitted', at: '2026-03-02T02:00:01.000Z', detail: null },
    { status: 'accepted', at: '2026-03-02T02:00:02.000Z', detail: '服务商已受理' },
    { status: 'failed', at: '2026-03-02T02:00:09.000Z', detail: 'MK:0001 用户停机' },
  ],
});

type Handler = (request: RecordedRequest) => FakeReply | undefined;
function serve(messages: SmsMessage[], extra?: Handler) {
  server = startFakeServer((request) => {
    const answered = extra?.(request);
    if (answered) return answered;
    if (request.url === TEMPLATES)
      return ok({
        items: [makeTemplate({ id: 't1', name: '到店提醒', status: 'approved' })],
        total: 1,
        page: 1,
        pageSize: 100,
      });
    if (request.url === MESSAGES)
      return ok({ items: messages, total: messages.length, totalCapped: false, page: 1, pageSize: 20 });
    const one = messages.find((m) => request.url === `${MESSAGES}/${m.id}`);
    if (one) return ok(one);
    return failure(404, '不存在', 'NOT_FOUND');
  });
  return server;
}
const listParams = () =>
  server?.requests.filter((r) => r.url === MESSAGES).map((r) => r.config.params as Record<string, unknown>) ??
  [];

async function choose(label: string, option: string) {
  fireEvent.mouseDown(screen.getByLabelText(label));
  const options = await screen.findAllByTitle(option);
  fireEvent.click(options.find((el) => el.classList.contains('ant-select-item-option')) as HTMLElement);
}

describe('发送记录', () => {
  it('lists the records and sends the filters typed, and those of the link, as the query', async () => {
    serve([makeMessage(), FAILED]);
    renderSms('/sms/record?callId=call-9');

    const failedRow = (await screen.findByText('13900000002')).closest('tr') as HTMLElement;
    expect(within(failedRow).getByText('失败')).toBeTruthy();
    expect(within(failedRow).getByText('MK:0001 用户停机')).toBeTruthy();
    expect(within(failedRow).getByRole('link', { name: '通话' }).getAttribute('href')).toBe(
      '/call-record/detail/call-9',
    );
    expect(listParams().at(-1)).toEqual({ callId: 'call-9', page: 1, pageSize: 20 });
    expect(screen.getByText('通话 call-9')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('手机号'), { target: { value: '139' } });
    await choose('状态', '失败');
    await choose('来源', '跟进规则');
    await choose('模板', '到店提醒');
    fireEvent.click(screen.getByRole('button', { name: '查询' }));
    await waitFor(() =>
      expect(listParams().at(-1)).toEqual({
        phone: '139',
        status: 'failed',
        source: 'follow_up',
        templateId: 't1',
        callId: 'call-9',
        page: 1,
        pageSize: 20,
      }),
    );

    const chip = screen.getByText('通话 call-9').closest('.ant-tag') as HTMLElement;
    fireEvent.click(chip.querySelector('.ant-tag-close-icon') as HTMLElement);
    await waitFor(() => expect(listParams().at(-1)).not.toHaveProperty('callId'));
    expect(listParams().at(-1)).toMatchObject({ phone: '139', status: 'failed' });

    fireEvent.click(screen.getByRole('button', { name: '重置' }));
    await waitFor(() => expect(listParams().at(-1)).toEqual({ page: 1, pageSize: 20 }));
  });

  it('opens a record with its full text and status timeline', async () => {
    serve([FAILED]);
    renderSms('/sms/record');
    fireEvent.click(await screen.findByRole('button', { name: '2026-03-02 10:00:00' }));
    const drawer = await screen.findByRole('dialog');
    expect(within(drawer).getByText(FAILED.content)).toBeTruthy();
    const timeline = within(drawer).getByRole('region', { name: '状态时间线' });
    const steps = ['待发送', '已提交', '运营商已接收', '失败'];
    for (const step of steps) expect(within(timeline).getByText(step)).toBeTruthy();
    expect(within(timeline).getByText('服务商已受理')).toBeTruthy();
    expect(within(timeline).getByText('MK:0001 用户停机')).toBeTruthy();
    expect(within(timeline).getByText('2026-03-02 10:00:09')).toBeTruthy();
    const text = timeline.textContent ?? '';
    expect(steps.map((step) => text.indexOf(step))).toEqual(
      [...steps.map((step) => text.indexOf(step))].sort((x, y) => x - y),
    );
    expect(within(drawer).getByText('失败原因')).toBeTruthy();
  });

  it('says how to send one when there are none, and when a filter finds none', async () => {
    serve([]);
    renderSms('/sms/record');
    const empty = await screen.findByText(/还没有发送过短信/);
    expect(within(empty).getByRole('link', { name: '发送短信' }).getAttribute('href')).toBe('/sms/send');
    server?.stop();
    serve([]);
    renderSms('/sms/record?status=failed');
    expect(await screen.findByText('没有符合条件的短信，请调整筛选条件')).toBeTruthy();
  });
});

const STATS: SmsStatistics = {
  totals: { sent: 120, delivered: 100, failed: 12, pending: 8, blocked: 5, parts: 150 },
  byDay: [
    { day: '2026-03-01', sent: 70, delivered: 60, failed: 6, pending: 4, blocked: 2, parts: 90 },
    { day: '2026-03-02', sent: 50, delivered: 40, failed: 6, pending: 4, blocked: 3, parts: 60 },
  ],
  byTemplate: [
    {
      templateId: 't1',
      templateName: '到店提醒',
      sent: 80,
      delivered: 72,
      failed: 4,
      pending: 4,
      blocked: 1,
      parts: 90,
    },
    {
      templateId: null,
      templateName: '助手短信',
      sent: 40,
      delivered: 28,
      failed: 8,
      pending: 4,
      blocked: 4,
      parts: 60,
    },
  ],
  failureReasons: [{ code: 'MK:0001', message: '用户停机', count: 7 }],
};

describe('数据统计', () => {
  it('shows the totals, the chart, by template and the failure reasons; the range and template drive the query', async () => {
    serve([], (request) => (request.url === STATISTICS ? ok(STATS) : undefined));
    renderSms('/sms/statistics');

    const cards = await screen.findByRole('list', { name: '短信统计合计' });
    const card = (label: string) => within(cards).getByText(label).parentElement?.textContent;
    expect(card('发送')).toBe('发送120');
    expect(card('成功')).toBe('成功100');
    expect(card('失败')).toBe('失败12');
    expect(card('发送中')).toBe('发送中8');
    expect(card('未发送')).toBe('未发送5');
    expect(card('计费条数')).toBe('计费条数150');
    expect(card('成功率')).toBe('成功率83.3%');
    expect(screen.getByRole('region', { name: '逐日趋势' })).toBeTruthy();

    const byTemplate = screen.getByRole('region', { name: '按模板统计' });
    const assistantRow = within(byTemplate).getByText('助手短信').closest('tr') as HTMLElement;
    expect(within(assistantRow).getByText('70%')).toBeTruthy();
    const reasons = screen.getByRole('region', { name: '失败原因' });
    expect(within(reasons).getByText('用户停机').closest('tr')?.textContent).toContain('7');

    const first = server?.requests.find((r) => r.url === STATISTICS)?.config.params as Record<string, string>;
    expect(Object.keys(first).sort()).toEqual(['from', 'to']);
    const days = (Date.parse(first.to as string) - Date.parse(first.from as string)) / 86_400_000;
    expect(days).toBe(6);

    await choose('模板', '到店提醒');
    await waitFor(() =>
      expect(server?.requests.filter((r) => r.url === STATISTICS).at(-1)?.config.params).toMatchObject({
        templateId: 't1',
      }),
    );
  });

  it('is honestly empty', async () => {
    serve([], (request) =>
      request.url === STATISTICS
        ? ok({
            totals: { sent: 0, delivered: 0, failed: 0, pending: 0, blocked: 0, parts: 0 },
            byDay: [],
            byTemplate: [],
            failureReasons: [],
          })
        : undefined,
    );
    renderSms('/sms/statistics');
    expect(await screen.findByText(/所选范围内没有短信/)).toBeTruthy();
    expect(screen.queryByRole('list', { name: '短信统计合计' })).toBeNull();
  });
});
