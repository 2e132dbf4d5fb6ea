import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type FakeFetchReply, type RecordedFetch, sseChunks, startFakeFetch } from '@/test/fake-fetch';
import { ok } from '@/test/fake-server';
import { detail, renderAssistant, serveAssistant, signIn } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;

beforeEach(() => {
  signIn();
  server = serveAssistant({ 'GET /api/project/p1/assistants/a1': ok(detail()) });
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const latency = { retrievalMs: 3.2, firstTokenMs: 12.6, brainMs: 20, totalMs: 24.4 };

const opening = sseChunks([
  { type: 'delta', text: '您好张先生，' },
  { type: 'delta', text: '我是示例教育的小李。' },
  { type: 'done', reply: '您好张先生，我是示例教育的小李。', mode: 'script', latency },
]);

const segment = {
  id: 's1',
  knowledgeBaseId: 'kb1',
  documentName: '课程价格.md',
  content: '少儿编程课每期 12 节，学费 2980 元，可分 3 期付款。',
  score: 0.82,
};

function chatServer(replies: (body: { messages: unknown[] }) => FakeFetchReply) {
  return startFakeFetch((request: RecordedFetch) => {
    if (request.url === '/api/project/p1/assistants/a1/test-chat')
      return replies(request.body as { messages: unknown[] });
    if (request.url === '/api/project/p1/tts/preview') {
      return { status: 200, bytes: new Uint8Array([82, 73, 70, 70]), contentType: 'audio/wav' };
    }
    return { status: 404, json: { success: false, message: '请求地址出错' } };
  });
}

const chatLog = () => screen.getByRole('log', { name: '对话内容' });

describe('assistant test chat', () => {
  it('opens with the opening line, then streams a knowledge-based reply with intent and latency', async () => {
    let releaseReply: () => void = () => {};
    const replyGate = new Promise<void>((resolve) => {
      releaseReply = resolve;
    });
    const [first, ...rest] = sseChunks(
      [
        { type: 'segments', segments: [segment], verdict: 'answer', confidence: 0.82, threshold: 0.3 },
        { type: 'delta', text: '学费是 2980 元，' },
        { type: 'delta', text: '可以分 3 期付款。' },
        { type: 'intent', grade: 'B', reason: '询问价格' },
        { type: 'done', reply: '学费是 2980 元，可以分 3 期付款。', mode: 'script', latency },
      ],
      4,
    );
    const fetches = chatServer(({ messages }) =>
      messages.length === 0
        ? { status: 200, chunks: opening }
        : { status: 200, chunks: [first!, replyGate, ...rest] },
    );
    renderAssistant('/assistant/edit?id=a1');

    expect(
      await within(await screen.findByRole('log')).findByText('您好张先生，我是示例教育的小李。'),
    ).toBeTruthy();
    expect(screen.getAllByText('离线脚本模式').length).toBeGreaterThan(0);
    const openingRequest = fetches.requests[0]!;
    expect(openingRequest.body).toEqual({
      messages: [],
      variables: { 客户姓名: '张先生', 产品名称: '少儿编程课' },
    });
    expect(openingRequest.headers.get('authorization')).toBe('Bearer tok-1');

    fireEvent.change(screen.getByLabelText('以客户身份输入'), { target: { value: '学费多少钱？' } });
    fireEvent.click(screen.getByRole('button', { name: '发送' }));

    // While the stream is paused the reply is still coming: no latency yet, sending is locked.
    expect(await within(chatLog()).findByText('学费多少钱？')).toBeTruthy();
    expect(within(chatLog()).getAllByText(/总计/)).toHaveLength(1);
    fireEvent.change(screen.getByLabelText('以客户身份输入'), { target: { value: '还有别的吗' } });
    expect(screen.getByRole('button', { name: '发送' }).hasAttribute('disabled')).toBe(true);
    releaseReply();

    expect(await within(chatLog()).findByText('学费是 2980 元，可以分 3 期付款。')).toBeTruthy();
    expect(within(chatLog()).getByText('课程价格.md · 置信度 0.82')).toBeTruthy();
    expect(within(chatLog()).getByText('置信度 0.82 · 可回答')).toBeTruthy();
    expect(within(chatLog()).getByText('少儿编程课每期 12 节，学费 2980 元，可分 3 期付款。')).toBeTruthy();
    expect(within(chatLog()).getByText('意向 B 可能有意向')).toBeTruthy();
    expect(within(chatLog()).getAllByText('检索 3 ms · 首字 13 ms · 总计 24 ms').length).toBe(2);
    expect(fetches.requests[1]?.body).toMatchObject({
      messages: [
        { role: 'assistant', content: '您好张先生，我是示例教育的小李。' },
        { role: 'user', content: '学费多少钱？' },
      ],
    });
  });

  it('shows an end-of-call action as a note and locks the input until reset', async () => {
    const fetches = chatServer(({ messages }) =>
      messages.length === 0
        ? { status: 200, chunks: opening }
        : {
            status: 200,
            chunks: sseChunks([
              { type: 'delta', text: '好的，很抱歉打扰您了，再见！' },
              { type: 'intent', grade: 'D', reason: '明确拒绝' },
              { type: 'action', action: 'opt_out', detail: '' },
              { type: 'action', action: 'end_call', detail: '' },
              { type: 'done', reply: '好的，很抱歉打扰您了，再见！', mode: 'script', latency },
            ]),
          },
    );
    renderAssistant('/assistant/edit?id=a1');
    await within(await screen.findByRole('log')).findByText('您好张先生，我是示例教育的小李。');

    fireEvent.change(screen.getByLabelText('以客户身份输入'), { target: { value: '别再打了' } });
    fireEvent.click(screen.getByRole('button', { name: '发送' }));

    expect(await within(chatLog()).findByText(/已加入免打扰/)).toBeTruthy();
    expect(within(chatLog()).getByText(/结束通话/)).toBeTruthy();
    expect(within(chatLog()).getByText('意向 D 明确拒绝')).toBeTruthy();
    await waitFor(() => expect(screen.getByLabelText('以客户身份输入').hasAttribute('disabled')).toBe(true));

    fireEvent.click(screen.getByRole('button', { name: '重置对话' }));
    await waitFor(() => expect(screen.getByLabelText('以客户身份输入').hasAttribute('disabled')).toBe(false));
    expect(within(chatLog()).queryByText('别再打了')).toBeNull();
    await waitFor(() =>
      expect(
        fetches.requests.filter((request) => (request.body as { messages: unknown[] }).messages.length === 0),
      ).toHaveLength(2),
    );
  });

  it('shows a question the knowledge refused with its confidence and reason, and no knowledge used', async () => {
    const fallback = '抱歉，这个问题我需要确认一下，稍后会有专人联系您。如需人工服务，请说“转人工”。';
    chatServer(({ messages }) =>
      messages.length === 0
        ? { status: 200, chunks: opening }
        : {
            status: 200,
            chunks: sseChunks([
              { type: 'segments', segments: [], verdict: 'low_confidence', confidence: 0.12, threshold: 0.3 },
              { type: 'delta', text: fallback },
              { type: 'done', reply: fallback, mode: 'script', latency },
            ]),
          },
    );
    renderAssistant('/assistant/edit?id=a1');
    await within(await screen.findByRole('log')).findByText('您好张先生，我是示例教育的小李。');
    fireEvent.change(screen.getByLabelText('以客户身份输入'), { target: { value: '你们营业厅几点开门' } });
    fireEvent.click(screen.getByRole('button', { name: '发送' }));
    expect(await within(chatLog()).findByText(fallback)).toBeTruthy();
    expect(within(chatLog()).getByText('置信度 0.12 · 置信度不足，拒答')).toBeTruthy();
    expect(within(chatLog()).queryByText(/引用知识/)).toBeNull();
  });

  it('sends edited sample values with the next turn', async () => {
    const fetches = chatServer(() => ({ status: 200, chunks: opening }));
    renderAssistant('/assistant/edit?id=a1');
    await within(await screen.findByRole('log')).findByText('您好张先生，我是示例教育的小李。');
    fireEvent.change(screen.getByLabelText('示例值 客户姓名'), { target: { value: '李女士' } });
    fireEvent.click(screen.getByRole('button', { name: '重置对话' }));
    await waitFor(() => expect(fetches.requests).toHaveLength(2));
    expect(fetches.requests[1]?.body).toMatchObject({ variables: { 客户姓名: '李女士' } });
  });

  it('tests the published version when chosen, starting over', async () => {
    const fetches = chatServer(() => ({ status: 200, chunks: opening }));
    renderAssistant('/assistant/edit?id=a1');
    await within(await screen.findByRole('log')).findByText('您好张先生，我是示例教育的小李。');
    expect(fetches.requests[0]?.body).not.toHaveProperty('version');
    fireEvent.click(screen.getByText('测试 v2'));
    await waitFor(() => expect(fetches.requests).toHaveLength(2));
    expect(fetches.requests[1]?.body).toMatchObject({ messages: [], version: 2 });
  });

  it('shows a refused turn with the server message', async () => {
    chatServer(() => ({
      status: 400,
      json: { success: false, status: 400, message: '对话不能超过 100 条', code: 'VALIDATION_FAILED' },
    }));
    renderAssistant('/assistant/edit?id=a1');
    expect(await within(await screen.findByRole('log')).findByText('对话不能超过 100 条')).toBeTruthy();
  });

  it('plays a reply through the server synthesiser with the assistant voice', async () => {
    const createObjectURL = vi.fn(() => 'blob:reply-1');
    Object.assign(URL, { createObjectURL, revokeObjectURL: vi.fn() });
    const play = vi.spyOn(HTMLMediaElement.prototype, 'play').mockResolvedValue(undefined);
    const fetches = chatServer(() => ({ status: 200, chunks: opening }));
    renderAssistant('/assistant/edit?id=a1');
    await within(await screen.findByRole('log')).findByText('您好张先生，我是示例教育的小李。');

    fireEvent.click(within(chatLog()).getByRole('button', { name: '播放语音' }));
    await waitFor(() => expect(play).toHaveBeenCalled());
    expect(fetches.requests.find((request) => request.url.endsWith('/tts/preview'))?.body).toEqual({
      text: '您好张先生，我是示例教育的小李。',
      voice: { provider: 'espeak', voiceId: 'cmn', speed: 1, volume: 80 },
    });
    expect(createObjectURL).toHaveBeenCalled();
  });
});
