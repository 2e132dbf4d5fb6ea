import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startFakeFetch } from '@/test/fake-fetch';
import { postEventStream, postForBlob, RequestError, setRequestNavigator } from '..';
import { LOGIN_REDIRECT_DELAY_MS } from '../request-client';

const navigate = vi.fn();

beforeEach(() => {
  setRequestNavigator(navigate);
  navigate.mockReset();
  vi.spyOn(toast, 'error');
});

afterEach(() => {
  vi.useRealTimers();
  window.history.replaceState(null, '', '/');
});

describe('fetch client (streams and binary answers)', () => {
  it('delivers each data line as an event, across chunk boundaries, CRLF and keep-alive comments', async () => {
    localStorage.setItem('token', 'tok-9');
    const { requests } = startFakeFetch(() => ({
      status: 200,
      chunks: [
        ': keep-alive\r\n\r\ndata: {"type":"delta","te',
        'xt":"你好"}\r\n\r\ndata: {"type":"done"}',
        '\n\n',
      ],
    }));
    const events: unknown[] = [];

    await postEventStream('/api/chat', { q: 1 }, { onEvent: (event) => events.push(event) });

    expect(events).toEqual([{ type: 'delta', text: '你好' }, { type: 'done' }]);
    expect(requests[0]?.headers.get('authorization')).toBe('Bearer tok-9');
    expect(requests[0]?.body).toEqual({ q: 1 });
  });

  it('toasts the server message of a refused call and rejects with it', async () => {
    startFakeFetch(() => ({ status: 400, json: { success: false, message: '字段 text：请输入合成文本' } }));

    const error = await postForBlob('/api/tts', {}).catch((reason: unknown) => reason);

    expect(error).toBeInstanceOf(RequestError);
    expect((error as RequestError).status).toBe(400);
    expect(toast.error).toHaveBeenCalledWith('字段 text：请输入合成文本', expect.anything());
  });

  it('takes an expired session to the login page, as the request client does', async () => {
    vi.useFakeTimers();
    window.history.replaceState(null, '', '/assistant/edit?id=a1');
    startFakeFetch(() => ({ status: 401, json: { success: false, message: '未登录' } }));

    await expect(postEventStream('/api/chat', {}, { onEvent: () => {} })).rejects.toBeInstanceOf(
      RequestError,
    );
    vi.advanceTimersByTime(LOGIN_REDIRECT_DELAY_MS);

    expect(navigate).toHaveBeenCalledWith(`/login?redirect=${encodeURIComponent('/assistant/edit?id=a1')}`);
  });

  it('reports a network failure in Chinese, but not a cancelled call', async () => {
    vi.spyOn(globalThis, 'fetch').mockRejectedValue(new TypeError('fetch failed'));
    await expect(postForBlob('/api/tts', {})).rejects.toBeInstanceOf(RequestError);
    expect(toast.error).toHaveBeenCalledWith('网络连接失败，请检查网络设置', expect.anything());

    vi.mocked(toast.error).mockClear();
    const controller = new AbortController();
    controller.abort();
    vi.mocked(globalThis.fetch).mockRejectedValue(new DOMException('aborted', 'AbortError'));
    await expect(
      postEventStream('/api/chat', {}, { onEvent: () => {}, signal: controller.signal }),
    ).rejects.toThrow('aborted');
    expect(toast.error).not.toHaveBeenCalled();
  });
});
