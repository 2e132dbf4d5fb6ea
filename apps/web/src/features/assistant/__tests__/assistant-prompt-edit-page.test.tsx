import { fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok } from '@/test/fake-server';
import { detail, renderAssistant, serveAssistant, signIn } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;

beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
});

const assistant = detail({ config: { ...detail().config, systemPrompt: '你好，请介绍课程。' } });

describe('prompt editor', () => {
  it('inserts a variable at the cursor, counts characters and previews with sample values', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    renderAssistant('/assistant/prompt-edit?id=a1');

    const prompt = (await screen.findByLabelText('提示词')) as HTMLTextAreaElement;
    expect(screen.getByText('9 / 8000 字')).toBeTruthy();
    prompt.setSelectionRange(3, 3);
    fireEvent.click(screen.getByRole('button', { name: '{{客户姓名}}' }));

    await waitFor(() => expect(prompt.value).toBe('你好，{{客户姓名}}请介绍课程。'));
    expect(screen.getByText('17 / 8000 字')).toBeTruthy();
    expect(screen.getByTestId('prompt-preview').textContent).toBe('你好，张先生请介绍课程。');

    fireEvent.change(screen.getByLabelText('客户姓名 示例值'), { target: { value: '王女士' } });
    expect(screen.getByTestId('prompt-preview').textContent).toBe('你好，王女士请介绍课程。');
  });

  it('adds a variable, rejects a bad name, and saves the whole draft back', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) }, (request) =>
      // Like the server, answer with the assistant as saved.
      request.method === 'PUT' ? ok({ ...assistant, ...(request.body as object) }) : undefined,
    );
    const router = renderAssistant('/assistant/prompt-edit?id=a1');
    const prompt = (await screen.findByLabelText('提示词')) as HTMLTextAreaElement;

    fireEvent.change(screen.getByLabelText('新变量名'), { target: { value: '有 空格' } });
    fireEvent.click(screen.getByRole('button', { name: '添加变量' }));
    expect(await screen.findByText('变量名为 1-20 个汉字、字母、数字或下划线')).toBeTruthy();

    fireEvent.change(screen.getByLabelText('新变量名'), { target: { value: '到期日期' } });
    fireEvent.click(screen.getByRole('button', { name: '添加变量' }));
    prompt.setSelectionRange(prompt.value.length, prompt.value.length);
    fireEvent.click(await screen.findByRole('button', { name: '{{到期日期}}' }));
    await waitFor(() => expect(prompt.value).toBe('你好，请介绍课程。{{到期日期}}'));

    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    await waitFor(() => expect(server?.requests.some((request) => request.method === 'PUT')).toBe(true));
    const body = server.requests.find((request) => request.method === 'PUT')?.body;
    expect(body).toMatchObject({
      name: '课程回访小助手',
      use: 'outbound',
      config: {
        systemPrompt: '你好，请介绍课程。{{到期日期}}',
        openingLine: '您好{{客户姓名}}，我是示例教育的小李。',
        variables: [
          { name: '客户姓名' },
          { name: '产品名称' },
          { name: '到期日期', sample: '', required: false },
        ],
      },
    });

    // Saved, so 返回 leaves without a question.
    await waitFor(() => expect(screen.queryByText('未保存')).toBeNull());
    fireEvent.click(screen.getByRole('button', { name: '返回' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/assistant/edit'));
  });

  it('asks before leaving with an unsaved prompt', async () => {
    server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(assistant) });
    const router = renderAssistant('/assistant/prompt-edit?id=a1');
    fireEvent.change(await screen.findByLabelText('提示词'), { target: { value: '改了但没保存' } });
    fireEvent.click(screen.getByRole('button', { name: '返回' }));
    expect(await screen.findByText('有未保存的修改，离开后将丢失。确定离开吗？')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/assistant/prompt-edit');
  });
});
