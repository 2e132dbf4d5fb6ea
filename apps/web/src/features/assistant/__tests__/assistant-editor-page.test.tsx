import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeFetch } from '@/test/fake-fetch';
import { failure, ok } from '@/test/fake-server';
import { detail, renderAssistant, serveAssistant, signIn, templates } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;

beforeEach(() => {
  signIn();
  vi.spyOn(toast, 'error');
  // The test chat opens with the opening line; these tests are about the form, so it stays quiet.
  startFakeFetch(() => ({ status: 200, chunks: [] }));
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const assistant = detail();

describe('assistant templates', () => {
  it('creates an assistant from a template and opens it in the editor', async () => {
    const created = detail({ id: 'a9', name: '客户回访', templateKey: 'customer-follow-up' });
    server = serveAssistant({
      'GET /api/project/p1/assistant-templates': ok(templates),
      'POST /api/project/p1/assistants': ok(created),
      'GET /api/project/p1/assistants/a9': ok(created),
    });
    const router = renderAssistant('/assistant/template');

    const card = (await screen.findByText('客户回访')).closest('.ant-card') as HTMLElement;
    expect(within(card).getByText('回访近期咨询过的客户，了解需求并邀约到店。')).toBeTruthy();
    expect(within(card).getByText('用途：呼出')).toBeTruthy();
    fireEvent.click(within(card).getByRole('button', { name: '使用此模板' }));

    await waitFor(() => expect(router.state.location.search).toBe('?id=a9'));
    expect(router.state.location.pathname).toBe('/assistant/edit');
    expect(server.requests.find((request) => request.method === 'POST')?.body).toMatchObject({
      name: '客户回访',
      templateKey: 'customer-follow-up',
    });
    expect(await screen.findByRole('heading', { name: '编辑小助手' })).toBeTruthy();
    expect((screen.getByLabelText('名称') as HTMLInputElement).value).toBe('客户回访');
  });
});

describe('assistant editor', () => {
  it('loads the assistant into the form sections', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    renderAssistant('/assistant/edit?id=a1');

    expect(((await screen.findByLabelText('名称')) as HTMLInputElement).value).toBe('课程回访小助手');
    expect((screen.getByLabelText('开场白') as HTMLTextAreaElement).value).toBe(
      '您好{{客户姓名}}，我是示例教育的小李。',
    );
    expect((screen.getByLabelText('变量 1 名称') as HTMLInputElement).value).toBe('客户姓名');
    expect(screen.getByText('已发布 v2')).toBeTruthy();
    expect(await screen.findByText('课程问答（12 段）')).toBeTruthy();
    expect(screen.getByRole('link', { name: '全屏编辑' }).getAttribute('href')).toBe(
      '/assistant/prompt-edit?id=a1',
    );
  });

  it('saves the whole draft with PUT', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(assistant),
      'PUT /api/project/p1/assistants/a1': ok({ ...assistant, name: '新名字' }),
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.change(await screen.findByLabelText('名称'), { target: { value: '新名字' } });
    expect(await screen.findByText('未保存')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '保存' }));

    await waitFor(() => expect(screen.queryByText('未保存')).toBeNull());
    const put = server.requests.find((request) => request.method === 'PUT');
    expect(put?.body).toMatchObject({
      name: '新名字',
      use: 'outbound',
      config: {
        openingLine: '您好{{客户姓名}}，我是示例教育的小李。',
        knowledge: { baseIds: ['kb1'], topK: 3 },
        variables: [
          { name: '客户姓名', sample: '张先生', required: true },
          { name: '产品名称', sample: '少儿编程课', required: false },
        ],
        conversation: { maxTurns: 8, endCallPhrases: ['再见', '拜拜'] },
      },
    });
  });

  it('knowledge settings: 置信度阈值 explained; 大模型改写与重排 off in 离线脚本模式', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    renderAssistant('/assistant/edit?id=a1');
    const threshold = (await screen.findByLabelText('置信度阈值')) as HTMLInputElement;
    expect(threshold.value).toBe('0.30');
    expect(screen.queryByLabelText('相似度阈值')).toBeNull();
    expect(screen.getByText(/置信度按每个知识库自己的问题校准：0.3 是答错已很少出现的位置/)).toBeTruthy();
    const offlineSwitch = screen.getByRole('switch', { name: '大模型改写与重排' });
    expect(offlineSwitch.hasAttribute('disabled')).toBe(true);
    expect(screen.getByText('仅大模型模式可用：请先在上方选择大模型')).toBeTruthy();
  });

  it('knowledge settings: 大模型改写与重排 switches on in 大模型模式 and is saved with the draft', async () => {
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
    const withModel = detail({
      config: { ...assistant.config, brain: { ...assistant.config.brain, providerId: 'lp1' } },
    });
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(withModel),
      'GET /api/project/p1/llm-providers': ok({ items: [provider], total: 1, page: 1, pageSize: 100 }),
      'PUT /api/project/p1/assistants/a1': ok(withModel),
    });
    renderAssistant('/assistant/edit?id=a1');
    expect(await screen.findByText(/每轮会增加大模型的耗时/)).toBeTruthy();
    const assist = screen
      .getAllByRole('switch', { name: '大模型改写与重排' })
      .find((el) => !el.hasAttribute('disabled'));
    expect(assist).toBeTruthy();
    fireEvent.click(assist!);
    fireEvent.click(await screen.findByRole('button', { name: '保存' }));
    await waitFor(() =>
      expect(server?.requests.find((request) => request.method === 'PUT')?.body).toMatchObject({
        config: { knowledge: { baseIds: ['kb1'], scoreThreshold: 0.3, llmAssist: true } },
      }),
    );
  });

  it('shows the server validation message and keeps the edits', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(assistant),
      'PUT /api/project/p1/assistants/a1': failure(
        400,
        '字段 config.conversation.transferNumber：转接号码格式不正确',
      ),
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.change(await screen.findByLabelText('名称'), { target: { value: '改过的名字' } });
    fireEvent.click(screen.getByRole('button', { name: '保存' }));

    await waitFor(() =>
      expect(toast.error).toHaveBeenCalledWith(
        '字段 config.conversation.transferNumber：转接号码格式不正确',
        expect.anything(),
      ),
    );
    expect(screen.getByText('未保存')).toBeTruthy();
    expect((screen.getByLabelText('名称') as HTMLInputElement).value).toBe('改过的名字');
  });

  it('refuses to save without a name, before asking the server', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    renderAssistant('/assistant/edit?id=a1');
    fireEvent.change(await screen.findByLabelText('名称'), { target: { value: '  ' } });
    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    expect(await screen.findByText('请输入小助手名称')).toBeTruthy();
    expect(server.requests.some((request) => request.method === 'PUT')).toBe(false);
  });

  it('asks before leaving with unsaved edits, and stays when told to', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    const router = renderAssistant('/assistant/edit?id=a1');

    fireEvent.change(await screen.findByLabelText('名称'), { target: { value: '没保存的名字' } });
    fireEvent.click(screen.getByRole('button', { name: '返回列表' }));
    expect(await screen.findByText('有未保存的修改，离开后将丢失。确定离开吗？')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '留下' }));
    await waitFor(() =>
      expect([...router.state.blockers.values()].some((blocker) => blocker.state === 'blocked')).toBe(false),
    );
    expect(router.state.location.pathname).toBe('/assistant/edit');
    expect((screen.getByLabelText('名称') as HTMLInputElement).value).toBe('没保存的名字');

    fireEvent.click(screen.getByRole('button', { name: '返回列表' }));
    fireEvent.click(await screen.findByRole('button', { name: '离开' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/assistant/list'));
  });

  it('leaves without asking when nothing changed', async () => {
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(assistant),
      'GET /api/project/p1/assistants': ok({ items: [], total: 0, page: 1, pageSize: 20 }),
    });
    const router = renderAssistant('/assistant/edit?id=a1');
    await screen.findByLabelText('名称');
    fireEvent.click(screen.getByRole('button', { name: '返回列表' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/assistant/list'));
  });

  it('inserts a variable into the opening line at the cursor', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    renderAssistant('/assistant/edit?id=a1');
    const opening = (await screen.findByLabelText('开场白')) as HTMLTextAreaElement;
    opening.setSelectionRange(2, 2);
    fireEvent.click(screen.getByRole('button', { name: '{{产品名称}}' }));
    await waitFor(() => expect(opening.value).toBe('您好{{产品名称}}{{客户姓名}}，我是示例教育的小李。'));
    expect(screen.getByText('未保存')).toBeTruthy();
  });

  it('creates a new assistant, then continues editing it at /assistant/edit?id=', async () => {
    const created = detail({ id: 'a7', name: '售后通知', publishedVersion: null });
    server = serveAssistant({
      'POST /api/project/p1/assistants': ok(created),
      'GET /api/project/p1/assistants/a7': ok(created),
    });
    const router = renderAssistant('/assistant/create');

    expect(await screen.findByRole('heading', { name: '新建小助手' })).toBeTruthy();
    expect(screen.getByText('保存后即可在这里测试对话')).toBeTruthy();
    fireEvent.change(screen.getByLabelText('名称'), { target: { value: '售后通知' } });
    fireEvent.click(screen.getByRole('button', { name: '保存' }));

    await waitFor(() =>
      expect(`${router.state.location.pathname}${router.state.location.search}`).toBe(
        '/assistant/edit?id=a7',
      ),
    );
    expect(server.requests.find((request) => request.method === 'POST')?.body).toMatchObject({
      name: '售后通知',
      use: 'outbound',
      status: 'enabled',
      config: { voice: { voiceId: 'cmn' }, brain: { providerId: null } },
    });
    expect(await screen.findByRole('heading', { name: '编辑小助手' })).toBeTruthy();
    // Replaced, so the browser's back button does not return to an empty create form.
    expect(router.state.historyAction).toBe('REPLACE');
  });

  it('copies through the server, then edits the copy', async () => {
    const copy = detail({ id: 'a8', name: '课程回访小助手（副本）' });
    server = serveAssistant({
      'POST /api/project/p1/assistants/a1/copy': ok(copy),
      'GET /api/project/p1/assistants/a8': ok(copy),
    });
    const router = renderAssistant('/assistant/copy?id=a1');
    await waitFor(() => expect(router.state.location.search).toBe('?id=a8'));
    expect(((await screen.findByLabelText('名称')) as HTMLInputElement).value).toBe('课程回访小助手（副本）');
    expect(server.requests.filter((request) => request.url.endsWith('/copy'))).toHaveLength(1);
  });

  it('publishes with a note, and lists versions newest first with rollback', async () => {
    let published = false;
    let rolledBack = false;
    const versions = [1, 2].map((version) => ({
      version,
      note: version === 1 ? '首个版本' : '补充价格问答',
      name: assistant.name,
      use: assistant.use,
      config: assistant.config,
      publishedAt: `2026-03-0${version}T02:00:00.000Z`,
      publishedBy: '王小明',
    }));
    server = serveAssistant({}, (request) => {
      const key = `${request.method} ${request.url}`;
      if (key === 'GET /api/project/p1/assistants/a1') {
        if (rolledBack) return ok({ ...assistant, name: '首个版本的名字', publishedVersion: 3 });
        return ok(published ? { ...assistant, publishedVersion: 3 } : assistant);
      }
      if (key === 'POST /api/project/p1/assistants/a1/publish') {
        published = true;
        return ok(null);
      }
      if (key === 'GET /api/project/p1/assistants/a1/versions') return ok(versions);
      if (key === 'POST /api/project/p1/assistants/a1/versions/1/rollback') {
        rolledBack = true;
        return ok(null);
      }
      return undefined;
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.click(await screen.findByRole('button', { name: '发布' }));
    // antd's ids are fixed in tests, so the dialog is found through its title rather than its name.
    const dialog = (await screen.findByText('发布新版本')).closest('[role="dialog"]') as HTMLElement;
    fireEvent.change(within(dialog).getByLabelText('版本说明'), { target: { value: '补充价格问答' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '发布' }));
    expect(await screen.findByText('已发布 v3')).toBeTruthy();
    expect(server.requests.find((request) => request.url.endsWith('/publish'))?.body).toEqual({
      note: '补充价格问答',
    });

    fireEvent.click(screen.getByRole('button', { name: '版本记录' }));
    const list = await screen.findByRole('list', { name: '版本列表' });
    const items = await within(list).findAllByRole('listitem');
    expect(within(items[0]!).getByText('v2')).toBeTruthy();
    expect(within(items[0]!).getByText('补充价格问答')).toBeTruthy();
    expect(within(items[1]!).getByText('v1')).toBeTruthy();
    expect(within(items[1]!).getByText(/王小明/)).toBeTruthy();

    fireEvent.click(within(items[1]!).getByRole('button', { name: '回滚到此版本' }));
    fireEvent.click(await screen.findByRole('button', { name: '回滚' }));
    // The editor now shows the rolled-back draft.
    await waitFor(() =>
      expect((screen.getByLabelText('名称') as HTMLInputElement).value).toBe('首个版本的名字'),
    );
  });
});
