import type {
  WebhookDeliveryDetail,
  WebhookEndpoint,
  WebhookEndpointCreateRequest,
} from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { failure, ok } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import {
  fakeClipboard,
  findDialog,
  makeAttempt,
  makeDelivery,
  makeDeliveryDetail,
  makeEndpoint,
  page,
  serveConsole,
  WEBHOOK_SECRET,
  WEBHOOKS,
} from './developer-fixtures';

let server: ReturnType<typeof serveConsole> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});

const ENDPOINT = `${WEBHOOKS}/we1`;
const DELIVERIES = `${ENDPOINT}/deliveries`;
const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const requestsTo = (method: string, url: string) =>
  server?.requests.filter((request) => request.method === method && request.url === url) ?? [];

/** Picks an option of an antd Select by its label. */
async function choose(select: HTMLElement, option: string) {
  fireEvent.mouseDown(select);
  const options = await screen.findAllByText(option);
  fireEvent.click(options.at(-1) as HTMLElement);
}

describe('Webhooks', () => {
  it('lists endpoints with their events, status and the last 24 hours', async () => {
    server = serveConsole('owner', {
      [`GET ${WEBHOOKS}`]: ok([
        makeEndpoint(),
        makeEndpoint({
          id: 'we2',
          url: 'https://orders.example.com/callpilot',
          description: '',
          events: ['task.finished'],
          enabled: false,
          disabledReason: 'gone',
          disabledAt: '2026-03-02T02:00:00.000Z',
          recent: { succeeded: 0, failed: 1, pending: 0, dropped: 0 },
        }),
      ]),
    });
    renderApp('/developer-options/webhooks');
    expect(
      await screen.findByText('https://crm.example.com/hooks/callpilot', undefined, { timeout: 15_000 }),
    ).toBeTruthy();
    const crm = row('https://crm.example.com/hooks/callpilot');
    for (const text of ['CRM 线索同步', '2 个事件', '启用', '成功 42', '失败 3', '投递中 1']) {
      expect(within(crm).getByText(text)).toBeTruthy();
    }
    const orders = row('https://orders.example.com/callpilot');
    expect(within(orders).getByText('已停用')).toBeTruthy();
    expect(within(orders).getByText('接收方返回 410 Gone，已自动停用')).toBeTruthy();
    // The address is a real link to the endpoint's page.
    expect(
      screen.getByRole('link', { name: 'https://crm.example.com/hooks/callpilot' }).getAttribute('href'),
    ).toBe('/developer-options/webhooks/we1');

    fireEvent.mouseEnter(within(crm).getByText('2 个事件'));
    const tip = await screen.findByRole('tooltip');
    expect(within(tip).getByText('通话结束')).toBeTruthy();
    expect(within(tip).getByText('通话分析完成')).toBeTruthy();
  });

  it('adds an endpoint with its events, shows the server’s refusal of a private address, then opens it', async () => {
    let endpoints: WebhookEndpoint[] = [];
    let attempts = 0;
    server = serveConsole('owner', {
      [`GET ${WEBHOOKS}`]: () => ok(endpoints),
      [`POST ${WEBHOOKS}`]: (request) => {
        attempts += 1;
        if (attempts === 1) {
          return failure(400, '接收地址：127.0.0.1 是本机或内网地址，不允许作为 Webhook 接收地址');
        }
        const body = request.body as WebhookEndpointCreateRequest;
        const created = makeEndpoint({ id: 'we9', ...body });
        endpoints = [created];
        return ok(created);
      },
      [`GET ${WEBHOOKS}/we9`]: () => ok(endpoints[0]),
      [`GET ${WEBHOOKS}/we9/deliveries`]: ok(page([])),
    });
    const router = renderApp('/developer-options/webhooks');
    expect(await screen.findByText('还没有 Webhook 端点', undefined, { timeout: 15_000 })).toBeTruthy();
    fireEvent.click(await screen.findByRole('button', { name: '添加端点' }));
    const dialog = await findDialog('添加端点');

    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('请输入接收地址')).toBeTruthy();
    expect(within(dialog).getByText('订阅事件：至少选择一个事件')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('接收地址'), {
      target: { value: 'ftp://crm.example.com' },
    });
    expect(
      await within(dialog).findByText('接收地址须为 http:// 或 https:// 开头的网址，且不含用户名密码'),
    ).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('接收地址'), {
      target: { value: 'http://127.0.0.1:9000/hook' },
    });
    fireEvent.change(within(dialog).getByLabelText('描述'), { target: { value: 'CRM 线索同步' } });
    // 短信管理 is here: its receipts can be subscribed to like the rest.
    const sms = within(dialog).getByRole('checkbox', { name: /短信送达/ }) as HTMLInputElement;
    expect(sms.disabled).toBe(false);
    fireEvent.click(within(dialog).getByRole('checkbox', { name: /通话分析完成/ }));
    fireEvent.click(within(dialog).getByRole('checkbox', { name: /通话结束/ }));
    fireEvent.click(within(dialog).getByRole('checkbox', { name: /客户拒绝再联系/ }));
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));

    expect(
      await within(dialog).findByText('接收地址：127.0.0.1 是本机或内网地址，不允许作为 Webhook 接收地址'),
    ).toBeTruthy();
    expect(requestsTo('POST', WEBHOOKS)[0]?.body).toEqual({
      url: 'http://127.0.0.1:9000/hook',
      description: 'CRM 线索同步',
      // In the catalogue's order, not the order they were ticked in.
      events: ['call.ended', 'call.analyzed', 'contact.opted_out'],
    });

    fireEvent.change(within(dialog).getByLabelText('接收地址'), {
      target: { value: 'https://crm.example.com/hooks/callpilot' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/developer-options/webhooks/we9'));
    expect(requestsTo('POST', WEBHOOKS)[1]?.body).toMatchObject({
      url: 'https://crm.example.com/hooks/callpilot',
    });
    expect(await screen.findByText('还没有投递记录：事件发生或发送测试事件后会显示在这里')).toBeTruthy();
  });

  it('selects every available event at once with 全选', async () => {
    server = serveConsole('owner', { [`GET ${WEBHOOKS}`]: ok([]) });
    renderApp('/developer-options/webhooks');
    fireEvent.click(await screen.findByRole('button', { name: '添加端点' }, { timeout: 15_000 }));
    const dialog = await findDialog('添加端点');
    fireEvent.click(within(dialog).getByRole('checkbox', { name: '全选' }));
    const boxes = within(dialog).getAllByRole('checkbox') as HTMLInputElement[];
    const checked = boxes.filter((box) => box.checked).length;
    // Every event, 短信送达 included, plus 全选 itself.
    expect(checked).toBe(11);
    expect((within(dialog).getByRole('checkbox', { name: /短信送达/ }) as HTMLInputElement).checked).toBe(
      true,
    );
  });

  it('shows the catalogue: each event’s fields from its schema and a sample body', async () => {
    server = serveConsole('owner', { [`GET ${WEBHOOKS}`]: ok([]) });
    const router = renderApp('/developer-options/webhooks');
    fireEvent.click(await screen.findByRole('tab', { name: '事件目录' }, { timeout: 15_000 }));
    expect(router.state.location.search).toBe('?tab=events');
    fireEvent.click(await screen.findByText('通话分析完成'));

    const fields = await screen.findByRole('table', { name: 'call.analyzed 字段' });
    const gradeRow = within(fields).getByText('intentGrade').closest('tr') as HTMLElement;
    expect(within(gradeRow).getByText('"A" | "B" | "C" | "D" | null')).toBeTruthy();
    expect(within(gradeRow).getByText(/意向等级 A–D/)).toBeTruthy();
    const fieldsRow = within(fields).getByText('fields').closest('tr') as HTMLElement;
    expect(within(fieldsRow).getByText('object<string, string>')).toBeTruthy();
    expect(within(fields).getByText('startedAt').closest('tr')?.textContent).toContain('string (date-time)');

    const sample = screen.getByRole('figure', { name: 'call.analyzed 示例负载' });
    const body = JSON.parse(sample.querySelector('code')?.textContent ?? '');
    expect(body).toMatchObject({
      type: 'call.analyzed',
      data: { intentGrade: 'A', fields: { 意向产品: '年卡', 预约时间: '周五下午' } },
    });
    expect(typeof body.timestamp).toBe('string');

    // Nested objects are listed field by field.
    fireEvent.click(screen.getByText('任务结束'));
    const taskFields = await screen.findByRole('table', { name: 'task.finished 字段' });
    expect(within(taskFields).getByText('counts.answered')).toBeTruthy();
  });
});

describe('Webhook 端点', () => {
  const detail = (overrides: Partial<WebhookDeliveryDetail> = {}) => makeDeliveryDetail(overrides);

  it('reveals and copies the signing secret, and rolls it with a grace period', async () => {
    const clipboard = fakeClipboard();
    let endpoint = makeEndpoint();
    server = serveConsole('owner', {
      [`GET ${ENDPOINT}`]: () => ok(endpoint),
      [`GET ${DELIVERIES}`]: ok(page([])),
      [`GET ${ENDPOINT}/secret`]: ok({ secret: WEBHOOK_SECRET }),
      [`POST ${ENDPOINT}/secret/roll`]: () => {
        endpoint = makeEndpoint({ previousSecretUntil: '2099-03-03T02:00:00.000Z' });
        return ok({ secret: 'whsec_NewSecretAfterTheRoll0000000' });
      },
    });
    renderApp('/developer-options/webhooks/we1');
    expect(
      await screen.findByText('whsec_••••••••••••••••••••••••', undefined, { timeout: 15_000 }),
    ).toBeTruthy();
    expect(requestsTo('GET', `${ENDPOINT}/secret`)).toHaveLength(0);

    fireEvent.click(screen.getByRole('button', { name: '显示' }));
    expect(await screen.findByText(WEBHOOK_SECRET)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '隐藏' }));
    expect(screen.queryByText(WEBHOOK_SECRET)).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: '复制签名密钥' }));
    await waitFor(() => expect(clipboard).toHaveBeenCalledWith(WEBHOOK_SECRET));
    expect(await screen.findByText('已复制')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '轮换密钥' }));
    const dialog = await findDialog('轮换签名密钥');
    fireEvent.click(within(dialog).getByRole('radio', { name: '7 天' }));
    expect(within(dialog).getByText(/7 天内每次投递同时带新旧两个签名/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: '轮换' }));
    expect(await screen.findByText('whsec_NewSecretAfterTheRoll0000000')).toBeTruthy();
    expect(requestsTo('POST', `${ENDPOINT}/secret/roll`)[0]?.body).toEqual({ graceHours: 168 });
    expect(await screen.findByText(/轮换宽限中：旧密钥仍同时签名至/)).toBeTruthy();

    // The guide shows how to verify with the standardwebhooks libraries.
    fireEvent.click(screen.getByText('如何验证签名'));
    const node = await screen.findByRole('figure', { name: 'Node 验签示例' });
    expect(node.textContent).toContain("import { Webhook } from 'standardwebhooks';");
    expect(node.textContent).toContain("'webhook-signature': req.header('webhook-signature')");
  });

  it('sends a test event, which then shows in the log', async () => {
    let deliveries = [makeDelivery({ id: 'd0', status: 'succeeded', lastStatusCode: 200, attempts: 1 })];
    server = serveConsole('owner', {
      [`GET ${ENDPOINT}`]: ok(makeEndpoint({ events: ['task.finished'] })),
      [`GET ${DELIVERIES}`]: () => ok(page(deliveries)),
      [`POST ${ENDPOINT}/test`]: (request) => {
        const { eventType } = request.body as { eventType: 'task.state_changed' };
        const delivery = makeDelivery({
          id: 'd9',
          eventId: 'msg_test_01',
          eventType,
          status: 'succeeded',
          attempts: 1,
          lastStatusCode: 204,
          lastDurationMs: 31,
          test: true,
        });
        deliveries = [delivery, ...deliveries];
        return ok(delivery);
      },
    });
    renderApp('/developer-options/webhooks/we1');
    fireEvent.click(await screen.findByRole('button', { name: '发送测试事件' }, { timeout: 15_000 }));
    const dialog = await findDialog('发送测试事件');
    // The endpoint's own event first.
    expect(within(dialog).getByText('任务结束（task.finished）')).toBeTruthy();
    await choose(
      within(dialog).getByRole('combobox', { name: '事件类型' }),
      '任务状态变化（task.state_changed）',
    );
    fireEvent.click(within(dialog).getByRole('button', { name: '发送' }));

    expect(await screen.findByText('msg_test_01')).toBeTruthy();
    expect(requestsTo('POST', `${ENDPOINT}/test`)[0]?.body).toEqual({ eventType: 'task.state_changed' });
    const test = row('msg_test_01');
    for (const text of ['任务状态变化', '测试', '成功', 'HTTP 204', '31 ms'])
      expect(within(test).getByText(text)).toBeTruthy();
  });

  it('filters the log on the server and opens a delivery: payload, attempts, and a replay that shows its result', async () => {
    let current = detail();
    server = serveConsole('owner', {
      [`GET ${ENDPOINT}`]: ok(makeEndpoint()),
      [`GET ${DELIVERIES}`]: (request) => {
        const params = request.config.params as { page: number };
        return ok(page([makeDelivery()], 41, params.page));
      },
      [`GET ${DELIVERIES}/d1`]: () => ok(current),
      [`POST ${DELIVERIES}/d1/replay`]: () => {
        current = detail({
          status: 'succeeded',
          attempts: 3,
          lastStatusCode: 200,
          attemptLog: [
            ...current.attemptLog,
            makeAttempt({ id: 'a3', trigger: 'replay', statusCode: 200, durationMs: 42, responseBody: 'ok' }),
          ],
        });
        return ok(current);
      },
    });
    renderApp('/developer-options/webhooks/we1');
    expect(
      await screen.findByText('msg_01JQ8Z5X2M4T6V8B0C2D4F6H8K', undefined, { timeout: 15_000 }),
    ).toBeTruthy();
    expect(screen.getByText(/投递日志保留 30 天/)).toBeTruthy();

    await choose(screen.getByRole('combobox', { name: '投递状态' }), '失败');
    await choose(screen.getByRole('combobox', { name: '事件类型' }), '通话结束（call.ended）');
    fireEvent.click(screen.getByTitle('3'));
    await waitFor(() =>
      expect(requestsTo('GET', DELIVERIES).at(-1)?.config.params).toEqual({
        page: 3,
        pageSize: 20,
        status: 'failed',
        eventType: 'call.ended',
      }),
    );
    expect(requestsTo('GET', DELIVERIES).map((request) => request.config.params)).toContainEqual({
      page: 1,
      pageSize: 20,
      status: 'failed',
    });

    fireEvent.click(await screen.findByText('msg_01JQ8Z5X2M4T6V8B0C2D4F6H8K'));
    const drawer = await findDialog('投递详情');
    const payload = await within(drawer).findByRole('figure', { name: '投递负载' });
    expect(JSON.parse(payload.querySelector('code')?.textContent ?? '')).toEqual(current.payload);
    const first = within(drawer).getByRole('listitem', { name: '第 1 次尝试' });
    expect(within(first).getByText('自动')).toBeTruthy();
    expect(within(first).getByText('500')).toBeTruthy();
    expect(within(first).getByText('{"error":"数据库暂时不可用"}')).toBeTruthy();
    expect(within(first).getByRole('figure', { name: '第 1 次请求头' }).textContent).toContain(
      'webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=',
    );
    const second = within(drawer).getByRole('listitem', { name: '第 2 次尝试' });
    expect(within(second).getByText('接收方 15 秒内未应答')).toBeTruthy();

    fireEvent.click(within(drawer).getByRole('button', { name: '重新发送' }));
    expect(await screen.findByText('重新发送成功：HTTP 200 · 42 ms')).toBeTruthy();
    const third = await within(drawer).findByRole('listitem', { name: '第 3 次尝试' });
    expect(within(third).getByText('手动重发')).toBeTruthy();
    expect(within(drawer).getByText('尝试记录（3）')).toBeTruthy();
    expect(requestsTo('POST', `${DELIVERIES}/d1/replay`)).toHaveLength(1);
  });

  it('switches an endpoint off and on, and says why it was disabled', async () => {
    let endpoint = makeEndpoint({ failingSince: '2026-03-01T02:00:00.000Z' });
    server = serveConsole('owner', {
      [`GET ${ENDPOINT}`]: () => ok(endpoint),
      [`GET ${DELIVERIES}`]: ok(page([])),
      [`PUT ${ENDPOINT}`]: (request) => {
        const { enabled } = request.body as { enabled: boolean };
        endpoint = makeEndpoint({
          enabled,
          disabledReason: enabled ? null : 'manual',
          disabledAt: enabled ? null : '2026-03-03T02:00:00.000Z',
        });
        return ok(endpoint);
      },
    });
    renderApp('/developer-options/webhooks/we1');
    expect(await screen.findByText(/起投递一直失败/, undefined, { timeout: 15_000 })).toBeTruthy();
    fireEvent.click(screen.getByRole('switch', { name: '启用端点' }));
    expect(await screen.findByText(/^已手动停用（/)).toBeTruthy();
    expect(requestsTo('PUT', ENDPOINT)[0]?.body).toEqual({ enabled: false });
    expect((screen.getByRole('button', { name: '发送测试事件' }) as HTMLButtonElement).disabled).toBe(true);
  });

  it('lets a member read the endpoint and its log, without the secret or any change', async () => {
    server = serveConsole('member', {
      [`GET ${ENDPOINT}`]: ok(makeEndpoint()),
      [`GET ${DELIVERIES}`]: ok(page([makeDelivery()])),
      [`GET ${DELIVERIES}/d1`]: ok(detail()),
    });
    renderApp('/developer-options/webhooks/we1');
    fireEvent.click(
      await screen.findByText('msg_01JQ8Z5X2M4T6V8B0C2D4F6H8K', undefined, { timeout: 15_000 }),
    );
    const drawer = await findDialog('投递详情');
    expect(await within(drawer).findByRole('listitem', { name: '第 1 次尝试' })).toBeTruthy();
    expect(within(drawer).queryByRole('button', { name: '重新发送' })).toBeNull();

    for (const name of ['显示', '复制签名密钥', '轮换密钥', '发送测试事件', '编辑', '删除']) {
      expect(screen.queryByRole('button', { name })).toBeNull();
    }
    expect(screen.queryByRole('switch')).toBeNull();
    expect(screen.queryByText('签名密钥')).toBeNull();
    expect(server.requests.some((request) => request.url.endsWith('/secret'))).toBe(false);
    expect(server.requests.some((request) => request.method !== 'GET')).toBe(false);
  });
});
