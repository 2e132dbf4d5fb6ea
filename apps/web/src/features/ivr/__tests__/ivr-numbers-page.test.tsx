import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTurn, ringingDetail } from '@/test/api-fixtures';
import { type StreamGate, sseChunks, startFakeFetch } from '@/test/fake-fetch';
import { failure, ok } from '@/test/fake-server';
import { renderApp } from '@/test/render-route';
import { CALLS, makeAssistant, makeInboundCall, makeNumber, NUMBERS, serveConsole } from './ivr-fixtures';

let server: ReturnType<typeof serveConsole> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});

const never = (): StreamGate => new Promise<void>(() => {});

const bound = makeNumber();
const unbound = makeNumber({
  number: '13900000002',
  label: '',
  enabled: false,
  inboundAssistantId: null,
  inboundAssistantName: null,
});
const assistants = {
  items: [
    makeAssistant(),
    makeAssistant({ id: 'a2', name: '售后接待', publishedVersion: 1 }),
    makeAssistant({ id: 'a3', name: '草稿小助手', publishedVersion: null }),
  ],
  total: 3,
  page: 1,
  pageSize: 100,
};

const row = (number: string) => screen.getByText(number).closest('tr') as HTMLElement;

describe('号码管理', () => {
  it('lists each number with the assistant that answers it', async () => {
    server = serveConsole('owner', { [`GET ${NUMBERS}`]: ok([bound, unbound]) });
    const router = renderApp('/ivr/numbers');

    // The first test of the file loads the shell and the section's lazy chunks cold.
    expect(await screen.findByText('02100000001', undefined, { timeout: 15_000 })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/ivr/numbers');
    const tabs = screen.getByRole('navigation', { name: '通话流程导航' });
    expect(within(tabs).getByRole('link', { name: '号码管理' }).getAttribute('aria-current')).toBe('page');
    expect(within(tabs).getByRole('link', { name: '通话流程' }).getAttribute('href')).toBe('/ivr/list');

    expect(within(row('02100000001')).getByText('上海客服热线')).toBeTruthy();
    expect(within(row('02100000001')).getByText('课程回访小助手')).toBeTruthy();
    expect(within(row('13900000002')).getByText('未绑定')).toBeTruthy();
    expect(within(row('13900000002')).getByRole('switch', { name: '启用 13900000002' })).toBeTruthy();
    // Nothing answers an unbound number, so there is nothing to simulate yet.
    expect(
      within(row('13900000002')).getByRole('button', { name: '模拟来电' }).hasAttribute('disabled'),
    ).toBe(true);
    expect(screen.getByRole('button', { name: '添加号码' })).toBeTruthy();
  });

  it('binds a number to a published assistant, then unbinds it', async () => {
    let numbers = [bound, unbound];
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: () => ok(numbers),
      'GET /api/project/p1/assistants': ok(assistants),
      [`PUT ${NUMBERS}/13900000002/inbound`]: (request) => {
        const { assistantId } = request.body as { assistantId: string | null };
        const saved = {
          ...unbound,
          inboundAssistantId: assistantId,
          inboundAssistantName: assistantId ? '售后接待' : null,
        };
        numbers = [bound, saved];
        return ok(saved);
      },
    });
    renderApp('/ivr/numbers');
    await screen.findByText('13900000002');

    fireEvent.click(within(row('13900000002')).getByRole('button', { name: '呼入设置' }));
    const dialog = await screen.findByRole('dialog', { name: '呼入设置 · 13900000002' });
    fireEvent.mouseDown(within(dialog).getByLabelText('接听小助手'));
    expect(await screen.findByTitle('课程回访小助手（v2）')).toBeTruthy();
    // An unpublished assistant cannot answer calls: it is not offered.
    expect(screen.queryByTitle(/草稿小助手/)).toBeNull();
    fireEvent.click(screen.getByTitle('售后接待（v1）'));
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));

    await waitFor(() => expect(within(row('13900000002')).getByText('售后接待')).toBeTruthy());
    const puts = () => server?.requests.filter((request) => request.method === 'PUT') ?? [];
    expect(puts()[0]?.body).toEqual({ assistantId: 'a2', flowId: null });
    expect(
      within(row('13900000002')).getByRole('button', { name: '模拟来电' }).hasAttribute('disabled'),
    ).toBe(false);

    fireEvent.click(within(row('13900000002')).getByRole('button', { name: '呼入设置' }));
    const again = await screen.findByRole('dialog', { name: '呼入设置 · 13900000002' });
    fireEvent.click(within(again).getByRole('button', { name: '解除绑定' }));
    await waitFor(() => expect(within(row('13900000002')).getByText('未绑定')).toBeTruthy());
    expect(puts()[1]?.body).toEqual({ assistantId: null, flowId: null });
  });

  it('binds a number to a published call flow instead, and links the table to the flow', async () => {
    let numbers = [bound, unbound];
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: () => ok(numbers),
      'GET /api/project/p1/assistants': ok(assistants),
      'GET /api/project/p1/flows/options': ok([
        { id: 'f1', name: '星河宽带客服热线', publishedVersion: 3 },
        { id: 'f2', name: '夜间留言', publishedVersion: null },
      ]),
      [`PUT ${NUMBERS}/02100000001/inbound`]: (request) => {
        const { flowId } = request.body as { assistantId: string | null; flowId: string | null };
        const saved = {
          ...bound,
          inboundAssistantId: null,
          inboundAssistantName: null,
          inboundFlowId: flowId,
          inboundFlowName: '星河宽带客服热线',
        };
        numbers = [saved, unbound];
        return ok(saved);
      },
    });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001');

    fireEvent.click(within(row('02100000001')).getByRole('button', { name: '呼入设置' }));
    const dialog = await screen.findByRole('dialog', { name: '呼入设置 · 02100000001' });
    fireEvent.click(within(dialog).getByRole('radio', { name: '通话流程' }));
    fireEvent.mouseDown(await within(dialog).findByLabelText('接听流程'));
    // A draft-only flow is shown, but cannot answer calls until it is published.
    const draftOption = (await screen.findByTitle('夜间留言（未发布）')) as HTMLElement;
    expect(draftOption.getAttribute('aria-disabled')).toBe('true');
    fireEvent.click(draftOption);
    expect(within(dialog).getByRole('button', { name: '保存' }).hasAttribute('disabled')).toBe(true);
    fireEvent.click(screen.getByTitle('星河宽带客服热线（v3）'));
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));

    const flowLink = await within(row('02100000001')).findByRole('link', { name: '星河宽带客服热线' });
    expect(flowLink.getAttribute('href')).toBe('/ivr/edit/f1');
    expect(within(row('02100000001')).getByText(/流程：/)).toBeTruthy();
    expect(within(row('02100000001')).queryByText('课程回访小助手')).toBeNull();
    expect(server.requests.find((request) => request.method === 'PUT')?.body).toEqual({
      assistantId: null,
      flowId: 'f1',
    });
    expect(
      within(row('02100000001')).getByRole('button', { name: '模拟来电' }).hasAttribute('disabled'),
    ).toBe(false);
  });

  it('shows the server’s reason when the number is bound by another project', async () => {
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: ok([bound, unbound]),
      'GET /api/project/p1/assistants': ok(assistants),
      [`PUT ${NUMBERS}/13900000002/inbound`]: failure(409, '号码 13900000002 已被其他项目绑定', 'CONFLICT'),
    });
    renderApp('/ivr/numbers');
    await screen.findByText('13900000002');
    fireEvent.click(within(row('13900000002')).getByRole('button', { name: '呼入设置' }));
    const dialog = await screen.findByRole('dialog', { name: '呼入设置 · 13900000002' });
    fireEvent.mouseDown(within(dialog).getByLabelText('接听小助手'));
    fireEvent.click(await screen.findByTitle('课程回访小助手（v2）'));
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    expect(await screen.findByText('号码 13900000002 已被其他项目绑定')).toBeTruthy();
    // The dialog stays open with the choice, to pick another or cancel.
    expect(screen.getByRole('dialog', { name: '呼入设置 · 13900000002' })).toBeTruthy();
  });

  it('adds a number with its 备注', async () => {
    let numbers = [bound];
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: () => ok(numbers),
      [`POST ${NUMBERS}`]: (request) => {
        const body = request.body as { number: string; label: string; enabled: boolean };
        const created = makeNumber({
          number: '02188886666',
          label: body.label,
          inboundAssistantId: null,
          inboundAssistantName: null,
        });
        numbers = [bound, created];
        return ok(created);
      },
    });
    renderApp('/ivr/numbers');
    fireEvent.click(await screen.findByRole('button', { name: '添加号码' }));
    const dialog = await screen.findByRole('dialog', { name: '添加号码' });
    fireEvent.change(within(dialog).getByLabelText('号码'), { target: { value: 'abc' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));
    expect(await within(dialog).findByText('号码格式不正确')).toBeTruthy();

    fireEvent.change(within(dialog).getByLabelText('号码'), { target: { value: '021-8888 6666' } });
    fireEvent.change(within(dialog).getByLabelText('备注'), { target: { value: '上海总机' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '添加' }));

    expect(await screen.findByText('02188886666')).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'POST')?.body).toEqual({
      number: '021-8888 6666',
      label: '上海总机',
      enabled: true,
      trunkId: null,
    });
    expect(within(row('02188886666')).getByText('未绑定')).toBeTruthy();
  });

  it('switches a number off and deletes one after confirmation', async () => {
    let numbers = [bound, unbound];
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: () => ok(numbers),
      [`PUT ${NUMBERS}/02100000001`]: (request) => {
        const saved = { ...bound, ...(request.body as object) };
        numbers = [saved, unbound];
        return ok(saved);
      },
      [`DELETE ${NUMBERS}/13900000002`]: () => {
        numbers = numbers.filter((number) => number.number !== '13900000002');
        return ok(null);
      },
    });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001');

    fireEvent.click(screen.getByRole('switch', { name: '启用 02100000001' }));
    await waitFor(() =>
      expect(server?.requests.find((request) => request.method === 'PUT')?.body).toEqual({
        number: '02100000001',
        label: '上海客服热线',
        enabled: false,
      }),
    );
    await waitFor(() =>
      expect(screen.getByRole('switch', { name: '启用 02100000001' }).getAttribute('aria-checked')).toBe(
        'false',
      ),
    );

    fireEvent.click(within(row('13900000002')).getByRole('button', { name: '删除' }));
    const popup = (await screen.findByText('确定删除号码 13900000002？')).closest(
      '.ant-popover',
    ) as HTMLElement;
    fireEvent.click(within(popup).getByRole('button', { name: '删除' }));
    await waitFor(() => expect(screen.queryByText('13900000002')).toBeNull());
    expect(server.requests.some((request) => request.method === 'DELETE')).toBe(true);
  });

  it('rests a number so tasks stop calling from it, and puts it back', async () => {
    let numbers = [bound, unbound];
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: () => ok(numbers),
      [`PUT ${NUMBERS}/02100000001`]: (request) => {
        const { resting } = request.body as { resting: boolean };
        const saved = { ...bound, restingSince: resting ? '2026-03-10T01:30:00.000Z' : null };
        numbers = [saved, unbound];
        return ok(saved);
      },
    });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001');
    expect(within(row('02100000001')).getByText('使用中')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '休息 02100000001' }));
    expect(await within(row('02100000001')).findByText('休息中')).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'PUT')?.body).toEqual({ resting: true });
    expect(await screen.findByText('02100000001 开始休息，呼出任务将不再使用该号码')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '恢复 02100000001' }));
    expect(await within(row('02100000001')).findByText('使用中')).toBeTruthy();
    expect(server.requests.filter((request) => request.method === 'PUT').at(-1)?.body).toEqual({
      resting: false,
    });
  });

  it('is read-only for a project member, who may still place a 模拟来电', async () => {
    server = serveConsole('member', { [`GET ${NUMBERS}`]: ok([bound, unbound]) });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001');

    expect(
      screen.getByText('仅项目所有者或管理员可以添加、修改号码和呼入设置；你可以查看号码并模拟来电。'),
    ).toBeTruthy();
    expect(screen.queryByRole('button', { name: '添加号码' })).toBeNull();
    for (const name of ['编辑', '呼入设置', '删除', '休息 02100000001'])
      expect(screen.queryByRole('button', { name })).toBeNull();
    expect(screen.queryByRole('switch')).toBeNull();
    expect(within(row('13900000002')).getByText('停用')).toBeTruthy();
    expect(
      within(row('02100000001')).getByRole('button', { name: '模拟来电' }).hasAttribute('disabled'),
    ).toBe(false);
  });

  it('places a 模拟来电 and follows it live, with 挂断 and a link to the record', async () => {
    let releaseEnd: () => void = () => {};
    const endGate = new Promise<void>((resolve) => {
      releaseEnd = resolve;
    });
    const call = makeInboundCall();
    const fetches = startFakeFetch((request) => {
      if (!request.url.startsWith(`${CALLS}/events`)) return { status: 404, json: { success: false } };
      return {
        status: 200,
        chunks: [
          ...sseChunks([
            { type: 'answered', callId: 'c9', answeredAt: '2026-03-01T02:00:02.000Z' },
            {
              type: 'turn',
              callId: 'c9',
              turn: makeTurn({ index: 0, text: '您好，这里是示例教育，请问有什么可以帮您？' }),
            },
            { type: 'turn', callId: 'c9', turn: makeTurn({ index: 1, text: '你们的课程多少钱？' }) },
          ]),
          endGate,
          ...sseChunks([
            { type: 'ended', call },
            {
              type: 'updated',
              call: { ...call, intentGrade: 'B', machineGrade: 'B', summary: '来电咨询价格。' },
            },
          ]),
          never(),
        ],
      };
    });
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: ok([bound, unbound]),
      [`POST ${CALLS}/test-inbound`]: ok({ callId: 'c9' }),
      [`POST ${CALLS}/c9/hangup`]: ok({ hungUp: true }),
      [`GET ${CALLS}/c9`]: ok(ringingDetail(call)),
    });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001');

    fireEvent.click(within(row('02100000001')).getByRole('button', { name: '模拟来电' }));
    const dialog = await screen.findByRole('dialog', { name: '模拟来电' });
    expect(within(dialog).getByText('02100000001 · 上海客服热线 · 由「课程回访小助手」接听')).toBeTruthy();
    fireEvent.mouseDown(within(dialog).getByLabelText('模拟客户'));
    // Only personas that place calls themselves: a 忙线 or 空号 caller makes no sense.
    expect(screen.queryByTitle('忙线')).toBeNull();
    fireEvent.click(await screen.findByTitle('咨询问题的客户'));
    fireEvent.change(within(dialog).getByLabelText('主叫号码'), { target: { value: '12345' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始模拟' }));
    expect(await within(dialog).findByText('主叫号码须为 11 位手机号')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('主叫号码'), { target: { value: '13800000009' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始模拟' }));

    const transcript = await within(dialog).findByRole('list', { name: '模拟来电内容' });
    expect(await within(transcript).findByText('你们的课程多少钱？')).toBeTruthy();
    expect(within(transcript).getByText('您好，这里是示例教育，请问有什么可以帮您？')).toBeTruthy();
    expect(within(dialog).getByText('通话中')).toBeTruthy();
    expect(server.requests.find((request) => request.url === `${CALLS}/test-inbound`)?.body).toEqual({
      number: '02100000001',
      persona: 'asks_question',
      callerNumber: '13800000009',
    });
    expect(fetches.requests.find((request) => request.url.includes('/events'))?.url).toBe(
      `${CALLS}/events?callId=c9`,
    );

    fireEvent.click(within(dialog).getByRole('button', { name: '挂断' }));
    await waitFor(() =>
      expect(server?.requests.some((request) => request.url === `${CALLS}/c9/hangup`)).toBe(true),
    );
    releaseEnd();

    expect(await within(dialog).findByText('已结束：正常结束')).toBeTruthy();
    expect(within(dialog).queryByRole('button', { name: '挂断' })).toBeNull();
    expect(await within(dialog).findByText('B 可能有意向')).toBeTruthy();
    expect(within(dialog).getByRole('link', { name: '查看通话记录' }).getAttribute('href')).toBe(
      '/call-record/detail/c9',
    );
  });

  it('shows a call the project could not take as ended with its reason', async () => {
    const rejected = makeInboundCall({
      status: 'ended',
      endReason: 'callin_limit',
      answeredAt: null,
      talkSeconds: 0,
      turnCount: 0,
    });
    // Rejected at once: over before its events could be followed, so the stream has nothing more.
    startFakeFetch(() => ({ status: 200, chunks: [] }));
    server = serveConsole('owner', {
      [`GET ${NUMBERS}`]: ok([bound]),
      [`POST ${CALLS}/test-inbound`]: ok({ callId: 'c9' }),
      [`GET ${CALLS}/c9`]: ok({ ...ringingDetail(rejected), status: 'ended', endReason: 'callin_limit' }),
    });
    renderApp('/ivr/numbers');
    await screen.findByText('02100000001');
    fireEvent.click(within(row('02100000001')).getByRole('button', { name: '模拟来电' }));
    const dialog = await screen.findByRole('dialog', { name: '模拟来电' });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始模拟' }));

    expect(await within(dialog).findByText('已结束：超出呼入并发（已回忙音）')).toBeTruthy();
    expect(within(dialog).getByText('没有对话内容')).toBeTruthy();
    expect(within(dialog).queryByRole('button', { name: '挂断' })).toBeNull();
  });
});
