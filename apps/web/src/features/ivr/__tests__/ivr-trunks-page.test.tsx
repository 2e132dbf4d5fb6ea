import type { Trunk } from '@callpilot/contracts';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type StreamGate, sseChunks, startFakeFetch } from '@/test/fake-fetch';
import { failure, ok, type RecordedRequest } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import { makeNumber, makeTrunk, NUMBERS, page, SIM_OFF, serveConsole, TRUNKS } from './ivr-fixtures';

let server: ReturnType<typeof serveConsole> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
  vi.useRealTimers();
});

const ipTrunk = makeTrunk({
  id: 't2',
  name: 'PBX 对接',
  kind: 'ip',
  registrar: '',
  username: '',
  hasPassword: false,
  passwordHint: '',
  signallingAddress: '203.0.113.10:5060',
  peerAddresses: ['203.0.113.10', '198.51.100.0/24'],
  codecs: ['PCMU'],
  maxConcurrent: 120,
  numberCount: 2,
});

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const listRequests = () =>
  server?.requests.filter((request) => request.method === 'GET' && request.url === TRUNKS) ?? [];
const bodyOf = (method: string, url: string) =>
  server?.requests.find((request) => request.method === method && request.url === url)?.body;

describe('线路管理', () => {
  it('lists each trunk with its kind, endpoint, status, cap and numbers, and says once that SIP is off', async () => {
    server = serveConsole('owner', { [`GET ${TRUNKS}`]: ok(page([makeTrunk(), ipTrunk])) });
    renderApp('/ivr/trunks');

    // The first test of the file loads the shell and the section's lazy chunks cold.
    expect(await screen.findByText('电信 SIP 中继', undefined, { timeout: 15_000 })).toBeTruthy();
    const tabs = screen.getByRole('navigation', { name: '通话流程导航' });
    expect(within(tabs).getByRole('link', { name: '线路管理' }).getAttribute('aria-current')).toBe('page');
    expect(listRequests()[0]?.config.params).toEqual({ page: 1, pageSize: 20 });

    const register = row('电信 SIP 中继');
    for (const text of ['注册', 'sip.carrier.example.com:5060', '账号 02160880000', '未启用', '30', '0'])
      expect(within(register).getByText(text)).toBeTruthy();
    const ip = row('PBX 对接');
    for (const text of ['IP 对接', '203.0.113.10:5060', '放行 2 个对端地址', '未启用', '120', '2'])
      expect(within(ip).getByText(text)).toBeTruthy();
    expect(screen.getByText('SIP 线路未启用：服务器当前运行在模拟线路（TELEPHONY=sim）')).toBeTruthy();
    expect(screen.getByRole('button', { name: '添加线路' })).toBeTruthy();
  });

  it('shows registration and ping results and reads them again every 5 s, but not while the tab is hidden', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    let status = { ...SIM_OFF, state: 'failed' as const, detail: '403 Forbidden（账号或密码错误）' };
    server = serveConsole('owner', {
      [`GET ${TRUNKS}`]: () =>
        ok(
          page([
            makeTrunk({ status }),
            {
              ...ipTrunk,
              status: { ...SIM_OFF, state: 'unreachable', detail: '对端无应答（OPTIONS 超时）' },
            },
          ]),
        ),
    });
    renderApp('/ivr/trunks');
    expect(
      await screen.findByText('注册失败：403 Forbidden（账号或密码错误）', undefined, { timeout: 15_000 }),
    ).toBeTruthy();
    expect(screen.getByText('不可达：对端无应答（OPTIONS 超时）')).toBeTruthy();
    // Nothing to say once: SIP runs on this server.
    expect(screen.queryByText(/SIP 线路未启用/)).toBeNull();

    status = { ...SIM_OFF, state: 'registered', detail: null } as unknown as typeof status;
    const before = listRequests().length;
    await act(async () => {
      vi.advanceTimersByTime(5000);
    });
    expect(await screen.findByText('已注册')).toBeTruthy();
    expect(listRequests().length).toBe(before + 1);

    const visibility = vi.spyOn(document, 'visibilityState', 'get').mockReturnValue('hidden');
    const hidden = listRequests().length;
    await act(async () => {
      vi.advanceTimersByTime(15_000);
    });
    expect(listRequests().length).toBe(hidden);
    visibility.mockRestore();
  });

  it('adds a register trunk: the server’s rules on each field, the password sent once', async () => {
    let trunks: Trunk[] = [];
    server = serveConsole('owner', {
      [`GET ${TRUNKS}`]: () => ok(page(trunks)),
      [`POST ${TRUNKS}`]: (request) => {
        const created = makeTrunk({ ...(request.body as Partial<Trunk>), id: 't9' });
        trunks = [created];
        return ok(created);
      },
    });
    renderApp('/ivr/trunks');
    fireEvent.click(await screen.findByRole('button', { name: '添加线路' }, { timeout: 15_000 }));
    const dialog = await screen.findByRole('dialog', { name: '添加线路' });
    // An IP trunk's fields are not asked for a register trunk.
    expect(within(dialog).queryByLabelText('对端地址')).toBeNull();

    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('请输入线路名称')).toBeTruthy();
    expect(within(dialog).getByText('注册服务器：注册线路须填写，格式应为 主机[:端口]')).toBeTruthy();
    expect(within(dialog).getByText('密码：注册线路须填写')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('线路名称'), { target: { value: '电信 SIP 中继' } });
    fireEvent.change(within(dialog).getByLabelText('注册服务器'), {
      target: { value: 'sip:carrier.example.com' },
    });
    expect(
      await within(dialog).findByText(
        '注册服务器：请去掉 sip: 前缀，格式应为 主机[:端口]，如 sip.example.com 或 203.0.113.10:5060',
      ),
    ).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('注册服务器'), {
      target: { value: 'sip.carrier.example.com:5060' },
    });
    fireEvent.change(within(dialog).getByLabelText('用户名'), { target: { value: 'alice@x' } });
    expect(await within(dialog).findByText(/用户名：只能包含字母、数字/)).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('用户名'), { target: { value: '02160880000' } });
    fireEvent.change(within(dialog).getByLabelText('密码'), { target: { value: 'Carrier-Secret-7781' } });
    fireEvent.change(within(dialog).getByLabelText('注册有效期'), { target: { value: '30' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('注册有效期：须在 60 到 3600 秒之间')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('注册有效期'), { target: { value: '600' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));

    expect(await screen.findByText('sip.carrier.example.com:5060')).toBeTruthy();
    expect(bodyOf('POST', TRUNKS)).toEqual({
      name: '电信 SIP 中继',
      kind: 'register',
      transport: 'udp',
      registrar: 'sip.carrier.example.com:5060',
      username: '02160880000',
      authUsername: '',
      password: 'Carrier-Secret-7781',
      registerExpires: 600,
      outboundProxy: '',
      peerAddresses: [],
      codecs: ['PCMA', 'PCMU'],
      callerIdFormat: 'national',
      maxConcurrent: 30,
      enabled: true,
    });
  });

  it('adds an IP trunk with the peer addresses inbound calls may come from', async () => {
    server = serveConsole('owner', {
      [`POST ${TRUNKS}`]: (request) => ok(makeTrunk({ ...(request.body as Partial<Trunk>), id: 't9' })),
    });
    renderApp('/ivr/trunks');
    fireEvent.click(await screen.findByRole('button', { name: '添加线路' }, { timeout: 15_000 }));
    const dialog = await screen.findByRole('dialog', { name: '添加线路' });
    fireEvent.click(within(dialog).getByRole('radio', { name: 'IP 对接' }));
    await waitFor(() => expect(within(dialog).queryByLabelText('密码')).toBeNull());
    fireEvent.change(within(dialog).getByLabelText('线路名称'), { target: { value: 'PBX 对接' } });
    fireEvent.change(within(dialog).getByLabelText('信令地址'), { target: { value: '203.0.113.10:5060' } });
    fireEvent.change(within(dialog).getByLabelText('对端地址'), {
      target: { value: '203.0.113.10\n198.51.100.7/24' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(
      await within(dialog).findByText(
        '对端地址：网段 198.51.100.7/24 的主机位不为 0，应写作 198.51.100.0/24',
      ),
    ).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('对端地址'), {
      target: { value: '203.0.113.10\n198.51.100.0/24' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    await waitFor(() => expect(screen.queryByRole('dialog', { name: '添加线路' })).toBeNull());
    expect(bodyOf('POST', TRUNKS)).toMatchObject({
      kind: 'ip',
      signallingAddress: '203.0.113.10:5060',
      peerAddresses: ['203.0.113.10', '198.51.100.0/24'],
    });
    expect(bodyOf('POST', TRUNKS)).not.toHaveProperty('password');
  });

  it('edits a trunk without resending its password, switches it off, and deletes only after confirmation', async () => {
    let trunks = [makeTrunk({ numberCount: 1 }), ipTrunk];
    server = serveConsole('owner', {
      [`GET ${TRUNKS}`]: () => ok(page(trunks)),
      [`PUT ${TRUNKS}/t1`]: (request) => {
        trunks = [makeTrunk({ ...(request.body as Partial<Trunk>), numberCount: 1 }), ipTrunk];
        return ok(trunks[0]);
      },
      [`PUT ${TRUNKS}/t2/enabled`]: (request) => {
        trunks = [trunks[0]!, { ...ipTrunk, ...(request.body as object) }];
        return ok(trunks[1]);
      },
      [`DELETE ${TRUNKS}/t1`]: failure(
        409,
        '线路「电信 SIP 中继」仍有号码 02100000001 在使用，请先在号码管理中把这些号码改用其他线路或模拟线路后再删除',
        'CONFLICT',
      ),
    });
    renderApp('/ivr/trunks');
    await screen.findByText('电信 SIP 中继', undefined, { timeout: 15_000 });

    fireEvent.click(within(row('电信 SIP 中继')).getByRole('button', { name: '编辑' }));
    const dialog = await screen.findByRole('dialog', { name: '编辑线路' });
    const password = within(dialog).getByLabelText('密码') as HTMLInputElement;
    expect(password.value).toBe('');
    expect(password.placeholder).toBe('留空则不修改');
    expect(within(dialog).getByText('已填写（末位 …81），留空则不修改')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('并发上限'), { target: { value: '60' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    await waitFor(() => expect(within(row('电信 SIP 中继')).getByText('60')).toBeTruthy());
    const put = bodyOf('PUT', `${TRUNKS}/t1`) as Record<string, unknown>;
    expect(put).toMatchObject({
      name: '电信 SIP 中继',
      registrar: 'sip.carrier.example.com:5060',
      maxConcurrent: 60,
    });
    expect(put).not.toHaveProperty('password');

    fireEvent.click(screen.getByRole('switch', { name: '启用 PBX 对接' }));
    await waitFor(() => expect(bodyOf('PUT', `${TRUNKS}/t2/enabled`)).toEqual({ enabled: false }));
    await waitFor(() =>
      expect(screen.getByRole('switch', { name: '启用 PBX 对接' }).getAttribute('aria-checked')).toBe(
        'false',
      ),
    );

    fireEvent.click(within(row('电信 SIP 中继')).getByRole('button', { name: '删除' }));
    const popup = (await screen.findByText('确定删除线路「电信 SIP 中继」？')).closest(
      '.ant-popover',
    ) as HTMLElement;
    expect(within(popup).getByText('仍有 1 个号码使用此线路，需先把它们改用其他线路。')).toBeTruthy();
    fireEvent.click(within(popup).getByRole('button', { name: '删除' }));
    expect(
      await screen.findByText(
        '线路「电信 SIP 中继」仍有号码 02100000001 在使用，请先在号码管理中把这些号码改用其他线路或模拟线路后再删除',
      ),
    ).toBeTruthy();
    expect(screen.getByText('电信 SIP 中继')).toBeTruthy();
  });

  it('is read-only for a project member', async () => {
    server = serveConsole('member', { [`GET ${TRUNKS}`]: ok(page([makeTrunk(), ipTrunk])) });
    renderApp('/ivr/trunks');
    await screen.findByText('电信 SIP 中继', undefined, { timeout: 15_000 });
    expect(
      screen.getByText('仅项目所有者或管理员可以添加、修改线路和测试呼叫；你可以查看线路及其状态。'),
    ).toBeTruthy();
    expect(screen.queryByRole('button', { name: '添加线路' })).toBeNull();
    for (const name of ['编辑', '测试呼叫', '删除'])
      expect(screen.queryByRole('button', { name })).toBeNull();
    expect(screen.queryByRole('switch')).toBeNull();
    expect(within(row('电信 SIP 中继')).getByText('启用')).toBeTruthy();
  });

  it('pages through trunks on the server', async () => {
    const many = Array.from({ length: 20 }, (_, i) => makeTrunk({ id: `t${i}`, name: `线路${i + 1}` }));
    server = serveConsole('owner', {
      [`GET ${TRUNKS}`]: (request: RecordedRequest) =>
        (request.config.params as { page: number }).page === 2
          ? ok(page([makeTrunk({ id: 't99', name: '第二页的线路' })], 21, 2))
          : ok(page(many, 21)),
    });
    renderApp('/ivr/trunks');
    await screen.findByText('线路1', undefined, { timeout: 15_000 });
    expect(screen.getByText('共 21 条')).toBeTruthy();
    fireEvent.click(screen.getByTitle('2'));
    expect(await screen.findByText('第二页的线路')).toBeTruthy();
    expect(listRequests().at(-1)?.config.params).toEqual({ page: 2, pageSize: 20 });
  });
});

describe('测试呼叫', () => {
  const never = (): StreamGate => new Promise<void>(() => {});

  it('shows the server’s honest refusal when this server runs the simulated carrier', async () => {
    startFakeFetch(() => ({
      status: 409,
      json: {
        success: false,
        status: 409,
        data: null,
        code: 'CONFLICT',
        message: '本服务器未启用 SIP 线路：服务器当前运行在模拟线路（TELEPHONY=sim），无法发起测试呼叫',
      },
    }));
    server = serveConsole('owner', { [`GET ${TRUNKS}`]: ok(page([makeTrunk()])) });
    renderApp('/ivr/trunks');
    await screen.findByText('电信 SIP 中继', undefined, { timeout: 15_000 });
    fireEvent.click(within(row('电信 SIP 中继')).getByRole('button', { name: '测试呼叫' }));
    const dialog = await screen.findByRole('dialog', { name: '测试呼叫 · 电信 SIP 中继' });
    fireEvent.change(within(dialog).getByLabelText('被叫号码'), { target: { value: '138-0013' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始呼叫' }));
    expect(await within(dialog).findByText('被叫号码：只能包含数字（可用 + 开头），2 到 32 位')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('被叫号码'), { target: { value: '13800138000' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始呼叫' }));
    expect(
      await within(dialog).findByText(
        '本服务器未启用 SIP 线路：服务器当前运行在模拟线路（TELEPHONY=sim），无法发起测试呼叫',
      ),
    ).toBeTruthy();
    expect(within(dialog).queryByRole('list', { name: 'SIP 过程' })).toBeNull();
  });

  it('lists each SIP step as it arrives, then the outcome', async () => {
    let releaseEnd: () => void = () => {};
    const endGate = new Promise<void>((resolve) => {
      releaseEnd = resolve;
    });
    const fetches = startFakeFetch(() => ({
      status: 200,
      chunks: [
        ...sseChunks([
          {
            type: 'step',
            step: {
              at: 0,
              direction: 'out',
              message: 'INVITE sip:13800138000@sip.carrier.example.com',
              status: null,
              note: '',
            },
          },
          {
            type: 'step',
            step: { at: 14, direction: 'in', message: '401 Unauthorized', status: 401, note: '需要鉴权' },
          },
        ]),
        endGate,
        ...sseChunks([
          {
            type: 'step',
            step: { at: 420, direction: 'in', message: '180 Ringing', status: 180, note: '对方振铃' },
          },
          { type: 'done', ok: true, message: '已接通，4.2 秒后挂断' },
        ]),
        never(),
      ],
    }));
    server = serveConsole('owner', {
      [`GET ${TRUNKS}`]: ok(page([makeTrunk({ status: { ...SIM_OFF, state: 'registered', detail: null } })])),
    });
    renderApp('/ivr/trunks');
    await screen.findByText('电信 SIP 中继', undefined, { timeout: 15_000 });
    fireEvent.click(within(row('电信 SIP 中继')).getByRole('button', { name: '测试呼叫' }));
    const dialog = await screen.findByRole('dialog', { name: '测试呼叫 · 电信 SIP 中继' });
    fireEvent.change(within(dialog).getByLabelText('被叫号码'), { target: { value: '13800138000' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始呼叫' }));

    const steps = await within(dialog).findByRole('list', { name: 'SIP 过程' });
    expect(await within(steps).findByText('401 Unauthorized')).toBeTruthy();
    expect(within(steps).getByText('INVITE sip:13800138000@sip.carrier.example.com')).toBeTruthy();
    expect(within(steps).getByText('需要鉴权')).toBeTruthy();
    // The call is still going: no outcome yet, and closing would hang up.
    expect(within(steps).queryByText('180 Ringing')).toBeNull();
    expect(within(dialog).getByRole('button', { name: '挂断并关闭' })).toBeTruthy();
    expect(fetches.requests[0]).toMatchObject({
      url: `${TRUNKS}/t1/test-call`,
      body: { number: '13800138000' },
    });

    releaseEnd();
    expect(await within(dialog).findByText('测试成功：已接通，4.2 秒后挂断')).toBeTruthy();
    expect(within(steps).getByText('+420 ms')).toBeTruthy();
    expect(within(steps).getAllByRole('listitem')).toHaveLength(3);
  });
});

describe('号码管理 · 线路', () => {
  it('puts a number on a trunk and shows each number’s trunk', async () => {
    let numbers = [makeNumber({ trunkId: null, trunkName: null })];
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: () => ok(numbers),
      [`GET ${TRUNKS}`]: ok(page([makeTrunk(), { ...ipTrunk, enabled: false }], 2, 1, 100)),
      [`PUT ${NUMBERS}/02100000001`]: (request) => {
        numbers = [makeNumber({ trunkId: 't1', trunkName: '电信 SIP 中继', ...(request.body as object) })];
        return ok(numbers[0]);
      },
    });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001', undefined, { timeout: 15_000 });
    expect(within(row('02100000001')).getByText('模拟线路')).toBeTruthy();

    fireEvent.click(within(row('02100000001')).getByRole('button', { name: '编辑' }));
    const dialog = await screen.findByRole('dialog', { name: '编辑号码' });
    fireEvent.mouseDown(within(dialog).getByLabelText('线路'));
    expect(await screen.findByTitle('PBX 对接（已停用）')).toBeTruthy();
    fireEvent.click(screen.getByTitle('电信 SIP 中继'));
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));

    await waitFor(() => expect(within(row('02100000001')).getByText('电信 SIP 中继')).toBeTruthy());
    expect(bodyOf('PUT', `${NUMBERS}/02100000001`)).toEqual({
      number: '02100000001',
      label: '上海客服热线',
      enabled: true,
      trunkId: 't1',
    });
    expect(server.requests.find((request) => request.url === TRUNKS)?.config.params).toEqual({
      page: 1,
      pageSize: 100,
    });
  });
});
