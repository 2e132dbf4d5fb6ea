import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failure, ok } from '@/test/fake-server';
import { limits, renderAssistant, serveAssistant, signIn, summary } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;

beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
});

const listRequests = () =>
  (server?.requests ?? []).filter((request) => request.url === '/api/project/p1/assistants');

function page(number: number, total = 45) {
  const first = (number - 1) * 20 + 1;
  const count = Math.min(20, total - first + 1);
  return ok({
    items: Array.from({ length: count }, (_, index) => summary(first + index)),
    total,
    page: number,
    pageSize: 20,
  });
}

describe('assistant list', () => {
  it('shows the server page of assistants and asks the server for the next page', async () => {
    server = serveAssistant({}, (request) =>
      request.url === '/api/project/p1/assistants'
        ? page(Number(request.config.params?.page ?? 1))
        : undefined,
    );
    renderAssistant('/assistant/list');

    expect(await screen.findByText('小助手1')).toBeTruthy();
    expect(screen.getByText('小助手20')).toBeTruthy();
    expect(screen.queryByText('小助手21')).toBeNull();
    expect(screen.getByText('共 45 条')).toBeTruthy();
    expect(listRequests()[0]?.config.params).toMatchObject({ page: 1, pageSize: 20 });

    fireEvent.click(screen.getByTitle('2'));
    expect(await screen.findByText('小助手21')).toBeTruthy();
    expect(screen.queryByText('小助手1')).toBeNull();
    expect(listRequests().at(-1)?.config.params).toMatchObject({ page: 2, pageSize: 20 });
  });

  it('labels mode and publish state: 离线脚本模式 / 大模型, 未发布 / v3 with 有未发布修改', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({
        items: [
          summary(1),
          summary(2, { brainMode: 'llm', publishedVersion: 3, hasUnpublishedChanges: true }),
        ],
        total: 2,
        page: 1,
        pageSize: 20,
      }),
    });
    renderAssistant('/assistant/list');

    const first = (await screen.findByText('小助手1')).closest('tr')!;
    expect(within(first).getByText('离线脚本模式')).toBeTruthy();
    expect(within(first).getByText('未发布')).toBeTruthy();
    const second = screen.getByText('小助手2').closest('tr')!;
    expect(within(second).getByText('大模型')).toBeTruthy();
    expect(within(second).getByText('v3')).toBeTruthy();
    expect(within(second).getByText('有未发布修改')).toBeTruthy();
  });

  it('sends the keyword filter to the server and starts again at page 1', async () => {
    server = serveAssistant({}, (request) =>
      request.url === '/api/project/p1/assistants'
        ? page(Number(request.config.params?.page ?? 1))
        : undefined,
    );
    renderAssistant('/assistant/list');
    await screen.findByText('小助手1');
    fireEvent.click(screen.getByTitle('2'));
    await screen.findByText('小助手21');

    const search = screen.getByRole('searchbox', { name: '搜索小助手' });
    fireEvent.change(search, { target: { value: '回访' } });
    fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() =>
      expect(listRequests().at(-1)?.config.params).toMatchObject({ keyword: '回访', page: 1 }),
    );
  });

  it('deletes after confirmation and reloads the list', async () => {
    let deleted = false;
    server = serveAssistant({}, (request) => {
      if (request.method === 'DELETE' && request.url === '/api/project/p1/assistants/a1') {
        deleted = true;
        return ok(null);
      }
      if (request.url === '/api/project/p1/assistants') {
        return ok({ items: deleted ? [] : [summary(1)], total: deleted ? 0 : 1, page: 1, pageSize: 20 });
      }
      return undefined;
    });
    renderAssistant('/assistant/list');
    const row = (await screen.findByText('小助手1')).closest('tr')!;
    fireEvent.click(within(row).getByRole('button', { name: '删除' }));
    const confirm = await screen.findByRole('tooltip');
    expect(within(confirm).getByText('删除「小助手1」？')).toBeTruthy();
    fireEvent.click(within(confirm).getByRole('button', { name: '删除' }));

    expect(await screen.findByText('还没有智能小助手')).toBeTruthy();
    expect(deleted).toBe(true);
  });

  it('offers to create the first assistant when there are none', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
    });
    const router = renderAssistant('/assistant/list');
    fireEvent.click(await screen.findByRole('button', { name: '从模板创建第一个小助手' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/assistant/template'));
  });

  it('disables creating and copying, with the alert, when the feature is not open', async () => {
    server = serveAssistant({
      'GET /api/project/p1/balance-limit': ok({ ...limits, hasBalance: true, assistantLimit: 0 }),
      'GET /api/project/p1/assistants': ok({ items: [summary(1)], total: 1, page: 1, pageSize: 20 }),
    });
    renderAssistant('/assistant/list');

    expect(await screen.findByText('该功能未开通，请联系销售开通')).toBeTruthy();
    const row = (await screen.findByText('小助手1')).closest('tr')!;
    await waitFor(() =>
      expect(screen.getByRole('button', { name: '新建小助手' }).hasAttribute('disabled')).toBe(true),
    );
    expect(screen.getByRole('button', { name: '从模板创建' }).hasAttribute('disabled')).toBe(true);
    expect(within(row).getByRole('button', { name: '复制' }).hasAttribute('disabled')).toBe(true);
    // Reading and editing what exists stays possible.
    expect(within(row).getByRole('button', { name: '编辑' }).hasAttribute('disabled')).toBe(false);
  });

  it('disables creating once the assistant limit is reached', async () => {
    server = serveAssistant({
      'GET /api/project/p1/balance-limit': ok({ ...limits, hasBalance: true, assistantLimit: 1 }),
      'GET /api/project/p1/assistants': ok({ items: [summary(1)], total: 1, page: 1, pageSize: 20 }),
    });
    renderAssistant('/assistant/list');
    await screen.findByText('小助手1');
    await waitFor(() =>
      expect(screen.getByRole('button', { name: '新建小助手' }).hasAttribute('disabled')).toBe(true),
    );
    expect(screen.queryByText('该功能未开通，请联系销售开通')).toBeNull();
  });

  it('manages model profiles in the drawer: the key is write-only and 测试连接 shows the result', async () => {
    const provider = {
      id: 'lp1',
      name: 'DeepSeek',
      baseUrl: 'https://api.deepseek.com/v1',
      model: 'deepseek-chat',
      embeddingModel: '',
      hasApiKey: true,
      apiKeyHint: 'x9Zq',
      createdAt: '2026-03-01T02:00:00.000Z',
      updatedAt: '2026-03-01T02:00:00.000Z',
    };
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
      'GET /api/project/p1/llm-providers': ok({ items: [provider], total: 1, page: 1, pageSize: 100 }),
      'POST /api/project/p1/llm-providers/lp1/test': ok({
        ok: false,
        latencyMs: 120,
        message: '401 密钥无效',
      }),
      'PUT /api/project/p1/llm-providers/lp1': ok(provider),
    });
    renderAssistant('/assistant/list');
    fireEvent.click(await screen.findByRole('button', { name: '模型配置' }));

    expect(await screen.findByText('DeepSeek')).toBeTruthy();
    expect(screen.getByText('API Key：已保存（…x9Zq）')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '测试连接' }));
    expect(await screen.findByText('连接失败：401 密钥无效')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '编辑' }));
    expect(await screen.findByText('已保存（…x9Zq），留空则保持不变')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('默认模型'), { target: { value: 'deepseek-reasoner' } });
    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    await waitFor(() =>
      expect(server?.requests.find((request) => request.method === 'PUT')?.body).toEqual({
        name: 'DeepSeek',
        baseUrl: 'https://api.deepseek.com/v1',
        model: 'deepseek-reasoner',
        embeddingModel: '',
      }),
    );
  });

  it('shows the server message when a delete fails', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants': ok({ items: [summary(1)], total: 1, page: 1, pageSize: 20 }),
      'DELETE /api/project/p1/assistants/a1': failure(409, '该小助手正在被呼出任务使用，无法删除'),
    });
    renderAssistant('/assistant/list');
    const row = (await screen.findByText('小助手1')).closest('tr')!;
    fireEvent.click(within(row).getByRole('button', { name: '删除' }));
    const confirm = await screen.findByRole('tooltip');
    fireEvent.click(within(confirm).getByRole('button', { name: '删除' }));
    expect(await screen.findByText('该小助手正在被呼出任务使用，无法删除')).toBeTruthy();
    expect(screen.getByText('小助手1')).toBeTruthy();
  });
});
