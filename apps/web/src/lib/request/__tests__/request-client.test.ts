import { toast } from 'sonner';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { failure, ok, startFakeServer } from '@/test/fake-server';
import {
  del,
  get,
  OPENDOCK_PREFIX,
  opendockClient,
  patch,
  post,
  postForm,
  put,
  RequestError,
  setRequestNavigator,
} from '..';
import { getLoadingCount } from '../loading-counter';

let server: ReturnType<typeof startFakeServer> | undefined;
const navigate = vi.fn();

beforeEach(() => {
  setRequestNavigator(navigate);
  navigate.mockReset();
  vi.spyOn(toast, 'error');
});

afterEach(() => {
  server?.stop();
  server = undefined;
  vi.useRealTimers();
  window.history.replaceState(null, '', '/');
});

function serve(handle: Parameters<typeof startFakeServer>[0]) {
  server = startFakeServer(handle);
  return server;
}

async function rejectionOf(promise: Promise<unknown>): Promise<RequestError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(RequestError);
  return error as RequestError;
}

describe('request client', () => {
  it('unwraps the envelope and sends JSON with a 60 s timeout', async () => {
    const { requests } = serve(() => ok({ id: 'u1' }));

    await expect(post('/api/things', { name: 'a' })).resolves.toEqual({ id: 'u1' });

    const [request] = requests;
    expect(request?.method).toBe('POST');
    expect(request?.body).toEqual({ name: 'a' });
    expect(request?.headers['Content-Type']).toBe('application/json');
    expect(request?.config.timeout).toBe(60_000);
  });

  it('uses the verb of each helper', async () => {
    const { requests } = serve(() => ok(null));

    await get('/api/a');
    await put('/api/a', { v: 1 });
    await patch('/api/a', { v: 2 });
    await del('/api/a');

    expect(requests.map((r) => r.method)).toEqual(['GET', 'PUT', 'PATCH', 'DELETE']);
  });

  it('sends the stored token, except on login, register and sms-captcha', async () => {
    localStorage.setItem('token', 'tok-1');
    const { requests } = serve(() => ok(null));

    await get('/api/user/current');
    await post('/auth/login', {});
    await post('/auth/register', {});
    await get('/auth/sms-captcha?phone=1');
    await get('/auth/logout');

    expect(requests.map((r) => [r.url, r.headers.Authorization])).toEqual([
      ['/api/user/current', 'Bearer tok-1'],
      ['/auth/login', undefined],
      ['/auth/register', undefined],
      ['/auth/sms-captcha?phone=1', undefined],
      ['/auth/logout', 'Bearer tok-1'],
    ]);
  });

  it('treats success:false in a 2xx answer as an error', async () => {
    serve(() => ({ status: 200, body: { success: false, status: 200, data: null, message: '额度不足' } }));

    const error = await rejectionOf(get('/api/balance'));

    expect(error.message).toBe('额度不足');
    expect(toast.error).toHaveBeenCalledWith('额度不足', expect.anything());
  });

  it('reads the message from error, then message, then msg', async () => {
    const replies = [
      { error: 'from error', message: 'from message', msg: 'from msg' },
      { error: '', message: 'from message', msg: 'from msg' },
      { error: null, msg: 'from msg' },
    ];
    serve(() => ({ status: 400, body: { success: false, ...replies.shift() } }));

    const messages = [];
    for (let i = 0; i < 3; i++) messages.push((await rejectionOf(get('/api/x'))).message);

    expect(messages).toEqual(['from error', 'from message', 'from msg']);
  });

  it.each([
    [400, '请求参数错误'],
    [403, '拒绝访问'],
    [404, '请求地址出错'],
    [408, '请求超时'],
    [500, '服务器内部错误'],
    [501, '服务未实现'],
    [502, '网关错误'],
    [503, '服务不可用'],
    [504, '网关超时'],
    [505, 'HTTP版本不受支持'],
    [418, '请求失败'],
  ])('falls back to the Chinese text of status %i', async (status, text) => {
    serve(() => ({ status }));

    const error = await rejectionOf(get('/api/x', { retry: 0 }));

    expect(error).toMatchObject({ status, message: text });
    expect(toast.error).toHaveBeenCalledWith(text, expect.anything());
  });

  it('reports a missing response as a network failure', async () => {
    serve(() => 'network-error');

    const error = await rejectionOf(get('/api/x', { retry: 0 }));

    expect(error.message).toBe('网络连接失败，请检查网络设置');
    expect(error.status).toBeUndefined();
  });

  it('does not toast when the call passes showError: false', async () => {
    serve(() => failure(409, '名称已存在', 'CONFLICT'));

    const error = await rejectionOf(post('/api/things', {}, { showError: false }));

    expect(error).toMatchObject({ message: '名称已存在', code: 'CONFLICT', status: 409 });
    expect(toast.error).not.toHaveBeenCalled();
  });

  it('swallows "Project is disabled": the call fails without a toast', async () => {
    serve(() => failure(403, 'Project is disabled', 'PROJECT_DISABLED'));

    const error = await rejectionOf(get('/api/project/p1/balance-limit'));

    expect(error).toMatchObject({ message: 'Project is disabled', code: 'PROJECT_DISABLED' });
    expect(toast.error).not.toHaveBeenCalled();
  });

  it('lets a token probe fail on 401 without warning or leaving the page', async () => {
    vi.useFakeTimers();
    localStorage.setItem('token', 'expired');
    serve(() => failure(401, '令牌无效', 'UNAUTHORIZED'));

    await rejectionOf(get('/api/user/current', { showError: false, redirectOnUnauthorized: false }));
    vi.advanceTimersByTime(2000);

    expect(toast.error).not.toHaveBeenCalled();
    expect(navigate).not.toHaveBeenCalled();
    expect(localStorage.getItem('token')).toBe('expired');
  });

  it('uses the call-specific fallback when the server gives no message', async () => {
    serve(() => ({ status: 500 }));

    const error = await rejectionOf(get('/auth/logout', { fallbackMessage: '登出失败', retry: 0 }));

    expect(error.message).toBe('登出失败');
  });

  it('on a 401 from an API call, warns once, then drops the token and goes to login', async () => {
    vi.useFakeTimers();
    window.history.replaceState(null, '', '/call-record/list?page=2');
    localStorage.setItem('token', 'expired');
    serve(() => failure(401, '令牌无效', 'UNAUTHORIZED'));

    await rejectionOf(get('/api/user/current'));
    await rejectionOf(get('/api/other', { showError: false }));

    expect(toast.error).toHaveBeenCalledTimes(1);
    expect(toast.error).toHaveBeenCalledWith('未登录或登录已过期', expect.anything());
    vi.advanceTimersByTime(999);
    expect(localStorage.getItem('token')).toBe('expired');
    expect(navigate).not.toHaveBeenCalled();

    vi.advanceTimersByTime(1);
    expect(localStorage.getItem('token')).toBeNull();
    expect(navigate).toHaveBeenCalledTimes(1);
    expect(navigate).toHaveBeenCalledWith('/login?redirect=%2Fcall-record%2Flist%3Fpage%3D2');
  });

  it('on a 401 from an auth call, shows the server message and stays', async () => {
    vi.useFakeTimers();
    localStorage.setItem('token', 'kept');
    serve(() => failure(401, '账号或密码错误', 'INVALID_CREDENTIALS'));

    const error = await rejectionOf(post('/auth/login', { email: 'a@b.c', password: 'x' }));
    vi.advanceTimersByTime(5_000);

    expect(error.message).toBe('账号或密码错误');
    expect(toast.error).toHaveBeenCalledWith('账号或密码错误', expect.anything());
    expect(navigate).not.toHaveBeenCalled();
    expect(localStorage.getItem('token')).toBe('kept');
  });

  it('toasts 401 for a 401 status without a server message on an auth call', async () => {
    serve(() => ({ status: 401 }));

    const error = await rejectionOf(post('/auth/login', {}));

    expect(error.message).toBe('未授权，请登录');
  });

  it('never toasts a failed /auth/refresh-token', async () => {
    serve(() => failure(400, '刷新失败'));

    const error = await rejectionOf(post('/auth/refresh-token', {}));

    expect(error.message).toBe('刷新失败');
    expect(toast.error).not.toHaveBeenCalled();
  });

  it('omits the token when the call passes withToken: false', async () => {
    localStorage.setItem('token', 'tok-1');
    const { requests } = serve(() => ok(null));

    await get('/api/public', { withToken: false });

    expect(requests[0]?.headers.Authorization).toBeUndefined();
  });

  it('drives the loading counter unless showLoading is false', async () => {
    let seen: number[] = [];
    serve(() => {
      seen.push(getLoadingCount());
      return ok(null);
    });

    await get('/api/a');
    expect(seen).toEqual([1]);
    expect(getLoadingCount()).toBe(0);

    seen = [];
    await get('/api/a', { showLoading: false });
    expect(seen).toEqual([0]);
  });

  describe('retry', () => {
    it('retries an idempotent call twice, 1000 ms apart, after network failures and 5xx', async () => {
      vi.useFakeTimers();
      const replies: ReturnType<typeof ok>[] = ['network-error', { status: 503 }, ok('done')];
      const { requests } = serve(() => replies.shift() ?? ok(null));

      const result = get<string>('/api/x');
      await vi.advanceTimersByTimeAsync(0);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(999);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(requests).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(1000);

      await expect(result).resolves.toBe('done');
      expect(requests).toHaveLength(3);
      expect(toast.error).not.toHaveBeenCalled();
    });

    it('gives up after the retry count and reports the last failure once', async () => {
      vi.useFakeTimers();
      const { requests } = serve(() => ({ status: 502 }));

      const result = rejectionOf(del('/api/x'));
      await vi.advanceTimersByTimeAsync(5_000);

      expect((await result).message).toBe('网关错误');
      expect(requests).toHaveLength(3);
      expect(toast.error).toHaveBeenCalledTimes(1);
    });

    it('honours per-call retry and retryDelay', async () => {
      vi.useFakeTimers();
      const { requests } = serve(() => 'network-error');

      const result = rejectionOf(put('/api/x', {}, { retry: 1, retryDelay: 200 }));
      await vi.advanceTimersByTimeAsync(199);
      expect(requests).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);

      expect((await result).message).toBe('网络连接失败，请检查网络设置');
      expect(requests).toHaveLength(2);
    });

    it.each([
      ['POST', () => post('/api/x', {})],
      ['PATCH', () => patch('/api/x', {})],
    ])('does not retry %s', async (_method, call) => {
      const { requests } = serve(() => ({ status: 500 }));

      await rejectionOf(call());

      expect(requests).toHaveLength(1);
    });

    it('does not retry a 4xx', async () => {
      const { requests } = serve(() => ({ status: 404 }));

      await rejectionOf(get('/api/x'));

      expect(requests).toHaveLength(1);
    });
  });

  it('sends postForm as multipart form data, from FormData or a plain object', async () => {
    const { requests } = serve(() => ok(null));
    const file = new Blob(['a,b'], { type: 'text/csv' });

    await postForm('/api/upload', { name: '名单', count: 2, file, skip: undefined });
    const given = new FormData();
    given.append('x', '1');
    await postForm('/api/upload', given);

    const [first, second] = requests;
    expect(first?.method).toBe('POST');
    expect(first?.headers['Content-Type']).toBe('multipart/form-data');
    expect(first?.body).toBeInstanceOf(FormData);
    const sent = first?.body as FormData;
    expect(sent.get('name')).toBe('名单');
    expect(sent.get('count')).toBe('2');
    expect(sent.get('file')).toBeInstanceOf(Blob);
    expect(sent.has('skip')).toBe(false);
    expect(second?.body).toBe(given);
  });

  it('has a second client under the opendock prefix with the same policy', async () => {
    localStorage.setItem('token', 'tok-1');
    server = startFakeServer(() => failure(400, '参数不对'), opendockClient.http);

    const error = await rejectionOf(opendockClient.get('/tasks'));

    expect(OPENDOCK_PREFIX).toBe('/opendock');
    expect(opendockClient.http.defaults.baseURL).toMatch(/\/opendock$/);
    const [request] = server.requests;
    expect(request?.headers.Authorization).toBe('Bearer tok-1');
    expect(request?.config.timeout).toBe(60_000);
    expect(error.message).toBe('参数不对');
    expect(toast.error).toHaveBeenCalledWith('参数不对', expect.anything());
  });
});
