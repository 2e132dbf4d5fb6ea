import type { ApiKey, ApiKeyCreateRequest } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import dayjs from 'dayjs';
import { afterEach, describe, expect, it } from 'vitest';
import { failure, ok } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import {
  API_KEYS,
  fakeClipboard,
  makeApiKey,
  makeRequestLog,
  page,
  SECRET,
  serveConsole,
} from './developer-fixtures';

let server: ReturnType<typeof serveConsole> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const bodyOf = (method: string, url: string) =>
  server?.requests.find((request) => request.method === method && request.url === url)?.body;

const rolling = makeApiKey({
  id: 'k2',
  name: '旧订单系统',
  maskedKey: 'cp_live_••••Zz91',
  status: 'rolling',
  expiresAt: '2026-03-05T02:00:00.000Z',
  rolledToId: 'k3',
  scopes: { records: 'read' },
  lastUsedAt: null,
  lastUsedIp: null,
});

describe('API 密钥', () => {
  it('lists keys masked, with their scopes, status, expiry, creator and last use', async () => {
    server = serveConsole('owner', { [`GET ${API_KEYS}`]: ok([makeApiKey(), rolling]) });
    const router = renderApp('/developer-options');

    // The first test of the file loads the shell and the section's lazy chunk cold.
    expect(await screen.findByText('CRM 正式环境', undefined, { timeout: 15_000 })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/developer-options/keys');
    const tabs = screen.getByRole('navigation', { name: '开发者选项导航' });
    expect(within(tabs).getByRole('link', { name: 'API 密钥' }).getAttribute('aria-current')).toBe('page');

    const crm = row('CRM 正式环境');
    for (const text of [
      'cp_live_••••7Q2x',
      '通话 读写 · 呼出任务 读写 · 任务联系人 读写 · 等 5 项',
      '可用',
      '永不过期',
      '王小明',
      '203.0.113.7',
    ]) {
      expect(within(crm).getByText(text)).toBeTruthy();
    }
    expect(
      within(crm).getByText(dayjs('2026-03-02T06:30:15.000Z').format('YYYY-MM-DD HH:mm:ss')),
    ).toBeTruthy();
    const old = row('旧订单系统');
    expect(within(old).getByText('轮换宽限中')).toBeTruthy();
    expect(
      within(old).getByText(`至 ${dayjs('2026-03-05T02:00:00.000Z').format('YYYY-MM-DD HH:mm')}`),
    ).toBeTruthy();
    expect(within(old).getByText('通话记录与录音 只读')).toBeTruthy();
    expect(within(old).getByText('从未使用')).toBeTruthy();
    // A rolling key can still be revoked (ending its grace), not edited or rolled again.
    expect(within(old).queryByRole('button', { name: '轮换' })).toBeNull();
    expect(within(old).getByRole('button', { name: '吊销' })).toBeTruthy();

    // The full matrix on hover.
    fireEvent.mouseEnter(within(crm).getByText('通话 读写 · 呼出任务 读写 · 任务联系人 读写 · 等 5 项'));
    const matrix = await screen.findByRole('tooltip');
    expect(within(matrix).getByText('智能小助手').closest('tr')?.textContent).toBe('智能小助手只读');
    expect(within(matrix).getByText('知识库').closest('tr')?.textContent).toBe('知识库无');
  });

  it('explains keys when there are none, and creates one: matrix, expiry, allowlist rules, the secret shown once', async () => {
    const clipboard = fakeClipboard();
    let keys: ApiKey[] = [];
    server = serveConsole('owner', {
      [`GET ${API_KEYS}`]: () => ok(keys),
      [`POST ${API_KEYS}`]: (request) => {
        const body = request.body as ApiKeyCreateRequest;
        const key = makeApiKey({
          id: 'k9',
          name: body.name,
          scopes: body.scopes,
          lastUsedAt: null,
          lastUsedIp: null,
        });
        keys = [key];
        return ok({ key, secret: SECRET });
      },
    });
    renderApp('/developer-options/keys');
    expect(await screen.findByText('还没有 API 密钥', undefined, { timeout: 15_000 })).toBeTruthy();
    expect(screen.getByText(/API 密钥让你的 CRM、订单系统等自己的程序调用开放接口/)).toBeTruthy();
    fireEvent.click(await screen.findByRole('button', { name: '创建密钥' }));
    const dialog = await screen.findByRole('dialog', { name: '创建密钥' });

    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(await within(dialog).findByText('请输入密钥名称')).toBeTruthy();
    expect(within(dialog).getByText('权限范围：至少选择一项资源的读或读写权限')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('名称'), { target: { value: 'CRM 正式环境' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '全部只读' }));
    // 智能小助手 can only be read.
    const assistants = within(dialog).getByRole('radiogroup', { name: '智能小助手' });
    expect(within(assistants).queryByRole('radio', { name: '读写' })).toBeNull();
    fireEvent.click(
      within(within(dialog).getByRole('radiogroup', { name: '通话（发起单通外呼）' })).getByRole('radio', {
        name: '读写',
      }),
    );
    fireEvent.click(
      within(within(dialog).getByRole('radiogroup', { name: '短信' })).getByRole('radio', { name: '无' }),
    );
    fireEvent.click(within(dialog).getByRole('radio', { name: '90 天' }));
    fireEvent.change(within(dialog).getByLabelText('IP 白名单'), {
      target: { value: '203.0.113.7\noffice-gateway' },
    });
    expect(
      await within(dialog).findByText(
        'IP 白名单：每项须为 IP 地址或 CIDR 网段，如 203.0.113.7 或 203.0.113.0/24（“office-gateway”）',
      ),
    ).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('IP 白名单'), {
      target: { value: '203.0.113.7\n198.51.100.0/24\n' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));

    const secretDialog = await screen.findByRole('dialog', { name: '密钥「CRM 正式环境」已创建' });
    const body = bodyOf('POST', API_KEYS) as ApiKeyCreateRequest;
    expect(body).toMatchObject({
      name: 'CRM 正式环境',
      scopes: {
        calls: 'write',
        tasks: 'read',
        contacts: 'read',
        records: 'read',
        assistants: 'read',
        knowledge: 'read',
        do_not_call: 'read',
        sms: 'none',
      },
      ipAllowlist: ['203.0.113.7', '198.51.100.0/24'],
      rateLimitPerMinute: 600,
    });
    const expiresIn = dayjs(body.expiresAt).diff(dayjs(), 'hour');
    expect(expiresIn).toBeGreaterThan(90 * 24 - 2);
    expect(expiresIn).toBeLessThanOrEqual(90 * 24);

    expect(within(secretDialog).getByText(SECRET)).toBeTruthy();
    expect(within(secretDialog).getByText('密钥只显示这一次，关闭后无法再次查看，请立即保存')).toBeTruthy();
    fireEvent.click(within(secretDialog).getByRole('button', { name: '复制密钥' }));
    expect(await within(secretDialog).findByText('已复制')).toBeTruthy();
    expect(clipboard).toHaveBeenCalledWith(SECRET);

    // Esc does not lose the secret without asking.
    fireEvent.keyDown(secretDialog, { key: 'Escape' });
    // Found by its text: two open antd modals share one title id under test.
    const confirm = (await screen.findByText('关闭后无法再次查看该密钥。确定已经复制并保存了吗？')).closest(
      '[role="dialog"]',
    ) as HTMLElement;
    fireEvent.click(within(confirm).getByRole('button', { name: '返回' }));
    expect(screen.getByText(SECRET)).toBeTruthy();

    fireEvent.click(within(secretDialog).getByRole('button', { name: '我已保存' }));
    await waitFor(() => expect(screen.queryByText(SECRET)).toBeNull());
    // The list shows the new key by its last four only.
    expect(await screen.findByText('cp_live_••••7Q2x')).toBeTruthy();
  });

  it('shows the server’s refusal in the dialog and keeps what was typed', async () => {
    server = serveConsole('owner', {
      [`GET ${API_KEYS}`]: ok([makeApiKey()]),
      [`POST ${API_KEYS}`]: failure(400, 'IP 白名单：第 1 项 203.0.113.300 不是有效的 IP 地址'),
    });
    renderApp('/developer-options/keys');
    fireEvent.click(await screen.findByRole('button', { name: '创建密钥' }, { timeout: 15_000 }));
    const dialog = await screen.findByRole('dialog', { name: '创建密钥' });
    fireEvent.change(within(dialog).getByLabelText('名称'), { target: { value: '测试' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '全部读写' }));
    fireEvent.change(within(dialog).getByLabelText('IP 白名单'), { target: { value: '203.0.113.300' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));
    expect(
      await within(dialog).findByText('IP 白名单：第 1 项 203.0.113.300 不是有效的 IP 地址'),
    ).toBeTruthy();
    expect((within(dialog).getByLabelText('名称') as HTMLInputElement).value).toBe('测试');
    expect(bodyOf('POST', API_KEYS)).toMatchObject({
      expiresAt: null,
      scopes: { assistants: 'read', calls: 'write' },
    });
  });

  it('edits a key in place: name, scopes, allowlist and limit, never its expiry', async () => {
    let keys = [makeApiKey({ ipAllowlist: ['203.0.113.7'], expiresAt: '2026-06-01T02:00:00.000Z' })];
    server = serveConsole('owner', {
      [`GET ${API_KEYS}`]: () => ok(keys),
      [`PUT ${API_KEYS}/k1`]: (request) => {
        keys = [makeApiKey({ ...(request.body as Partial<ApiKey>) })];
        return ok(keys[0]);
      },
    });
    renderApp('/developer-options/keys');
    await screen.findByText('CRM 正式环境', undefined, { timeout: 15_000 });
    fireEvent.click(within(row('CRM 正式环境')).getByRole('button', { name: '编辑' }));
    const dialog = await screen.findByRole('dialog', { name: '编辑密钥' });
    expect((within(dialog).getByLabelText('IP 白名单') as HTMLTextAreaElement).value).toBe('203.0.113.7');
    expect(within(dialog).getByText('过期时间创建后不能修改，需要时请轮换密钥')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('名称'), { target: { value: 'CRM 测试环境' } });
    fireEvent.click(
      within(within(dialog).getByRole('radiogroup', { name: '知识库' })).getByRole('radio', { name: '只读' }),
    );
    fireEvent.change(within(dialog).getByLabelText('每分钟请求上限'), { target: { value: '0' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    expect(await within(dialog).findByText('每分钟请求上限至少为 1')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('每分钟请求上限'), { target: { value: '120' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));

    expect(await screen.findByText('CRM 测试环境')).toBeTruthy();
    expect(bodyOf('PUT', `${API_KEYS}/k1`)).toEqual({
      name: 'CRM 测试环境',
      scopes: {
        calls: 'write',
        records: 'read',
        tasks: 'write',
        contacts: 'write',
        assistants: 'read',
        knowledge: 'read',
      },
      ipAllowlist: ['203.0.113.7'],
      rateLimitPerMinute: 120,
    });
  });

  it('rolls a key with a grace period and shows the new secret once', async () => {
    fakeClipboard();
    server = serveConsole('owner', {
      [`GET ${API_KEYS}`]: ok([makeApiKey()]),
      [`POST ${API_KEYS}/k1/roll`]: ok({ key: makeApiKey({ id: 'k3' }), secret: SECRET }),
    });
    renderApp('/developer-options/keys');
    await screen.findByText('CRM 正式环境', undefined, { timeout: 15_000 });
    fireEvent.click(within(row('CRM 正式环境')).getByRole('button', { name: '轮换' }));
    const dialog = await screen.findByRole('dialog', { name: '轮换密钥「CRM 正式环境」' });
    expect(within(dialog).getByText(/新旧两个密钥在 24 小时内都可以使用/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('radio', { name: '立即失效' }));
    expect(within(dialog).getByText(/旧密钥立即失效，正在使用它的请求会马上失败/)).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('radio', { name: '1 小时' }));
    fireEvent.click(within(dialog).getByRole('button', { name: '轮换' }));

    const secretDialog = await screen.findByRole('dialog', { name: '密钥「CRM 正式环境」已轮换' });
    expect(bodyOf('POST', `${API_KEYS}/k1/roll`)).toEqual({ graceHours: 1 });
    expect(within(secretDialog).getByText(SECRET)).toBeTruthy();
    expect(within(secretDialog).getByText(/旧密钥在宽限期结束后失效/)).toBeTruthy();
  });

  it('revokes a key only after the warning is confirmed', async () => {
    let keys = [makeApiKey()];
    server = serveConsole('owner', {
      [`GET ${API_KEYS}`]: () => ok(keys),
      [`POST ${API_KEYS}/k1/revoke`]: () => {
        keys = [makeApiKey({ status: 'revoked', revokedAt: '2026-03-03T02:00:00.000Z' })];
        return ok(keys[0]);
      },
    });
    renderApp('/developer-options/keys');
    await screen.findByText('CRM 正式环境', undefined, { timeout: 15_000 });
    fireEvent.click(within(row('CRM 正式环境')).getByRole('button', { name: '吊销' }));
    const warning = await screen.findByText('吊销后使用该密钥的请求会立即失败');
    const popconfirm = warning.closest('.ant-popover') as HTMLElement;
    expect(server.requests.some((request) => request.url === `${API_KEYS}/k1/revoke`)).toBe(false);
    fireEvent.click(within(popconfirm).getByRole('button', { name: '吊销' }));

    expect(await screen.findByText('已吊销')).toBeTruthy();
    expect(server.requests.filter((request) => request.url === `${API_KEYS}/k1/revoke`)).toHaveLength(1);
    // Nothing left to do with a revoked key but read its log.
    const revoked = row('CRM 正式环境');
    expect(within(revoked).queryByRole('button', { name: '吊销' })).toBeNull();
    expect(within(revoked).getByRole('button', { name: '请求日志' })).toBeTruthy();
  });

  it('pages and filters the request log on the server', async () => {
    server = serveConsole('owner', {
      [`GET ${API_KEYS}`]: ok([makeApiKey()]),
      [`GET ${API_KEYS}/k1/requests`]: (request) => {
        const { page: pageNo, status } = request.config.params as { page: number; status: string };
        const total = status === 'error' ? 3 : 45;
        const count = status === 'error' ? 3 : pageNo === 3 ? 5 : 20;
        const first = (pageNo - 1) * 20;
        return ok(
          page(
            Array.from({ length: count }, (_, i) => makeRequestLog(first + i)),
            total,
            pageNo,
          ),
        );
      },
    });
    renderApp('/developer-options/keys');
    await screen.findByText('CRM 正式环境', undefined, { timeout: 15_000 });
    fireEvent.click(within(row('CRM 正式环境')).getByRole('button', { name: '请求日志' }));
    const drawer = await screen.findByRole('dialog', { name: '请求日志 · CRM 正式环境' });
    expect(await within(drawer).findByText('共 45 条')).toBeTruthy();
    expect(within(drawer).getByText(/保留 30 天/)).toBeTruthy();
    expect(within(drawer).getByText('/opendock/v1/calls/c1')).toBeTruthy();
    expect(within(drawer).getAllByText('429').length).toBeGreaterThan(0);

    fireEvent.click(within(drawer).getByTitle('2'));
    expect(await within(drawer).findByText('/opendock/v1/calls/c21')).toBeTruthy();
    fireEvent.click(within(drawer).getByText('失败'));
    expect(await within(drawer).findByText('共 3 条')).toBeTruthy();

    const logRequests = server.requests
      .filter((request) => request.url === `${API_KEYS}/k1/requests`)
      .map((request) => request.config.params);
    expect(logRequests).toEqual([
      { page: 1, pageSize: 20, status: 'all' },
      { page: 2, pageSize: 20, status: 'all' },
      { page: 1, pageSize: 20, status: 'error' },
    ]);
  });

  it('lets a member see keys and their logs, not change them', async () => {
    server = serveConsole('member', {
      [`GET ${API_KEYS}`]: ok([makeApiKey()]),
      [`GET ${API_KEYS}/k1/requests`]: ok(page([makeRequestLog(1)])),
    });
    renderApp('/developer-options/keys');
    await screen.findByText('CRM 正式环境', undefined, { timeout: 15_000 });
    expect(screen.queryByRole('button', { name: '创建密钥' })).toBeNull();
    expect(screen.getByText(/仅项目所有者或管理员可以创建、编辑、轮换和吊销密钥/)).toBeTruthy();
    const crm = row('CRM 正式环境');
    for (const name of ['编辑', '轮换', '吊销']) {
      expect((within(crm).getByRole('button', { name }) as HTMLButtonElement).disabled).toBe(true);
    }
    fireEvent.mouseEnter(within(crm).getByRole('button', { name: '轮换' }).parentElement as HTMLElement);
    expect(await screen.findByText('仅项目所有者或管理员可操作')).toBeTruthy();

    fireEvent.click(within(crm).getByRole('button', { name: '请求日志' }));
    expect(await screen.findByText('/opendock/v1/calls/c1')).toBeTruthy();
    expect(server.requests.some((request) => request.method !== 'GET')).toBe(false);
  });
});
