import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeCall, makeTurn, ringingDetail } from '@/test/api-fixtures';
import { type StreamGate, sseChunks, startFakeFetch } from '@/test/fake-fetch';
import { ok } from '@/test/fake-server';
import { detail, renderAssistant, serveAssistant, signIn } from './assistant-fixtures';

let server: ReturnType<typeof serveAssistant> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});
beforeEach(signIn);

const call = makeCall({
  id: 'c9',
  calleeNumber: '13800000009',
  answeredAt: '2026-03-01T02:00:03.000Z',
  endedAt: '2026-03-01T02:00:40.000Z',
  talkSeconds: 37,
  turnCount: 2,
  intentGrade: null,
  machineGrade: null,
  summary: '',
  recording: 'pending',
  persona: 'hesitant',
});

const turn = (index: number, speaker: 'assistant' | 'callee', text: string) =>
  makeTurn({ index, speaker, text, startMs: index * 4000, endMs: index * 4000 + 3000 });

function never(): StreamGate {
  return new Promise<void>(() => {});
}

describe('assistant test call (模拟通话)', () => {
  it('starts a simulated call and shows it live until the analysis arrives', async () => {
    let releaseEnd: () => void = () => {};
    const endGate = new Promise<void>((resolve) => {
      releaseEnd = resolve;
    });
    const fetches = startFakeFetch((request) => {
      if (request.url.startsWith('/api/project/p1/calls/events')) {
        return {
          status: 200,
          chunks: [
            ...sseChunks([
              { type: 'answered', callId: 'c9', answeredAt: '2026-03-01T02:00:03.000Z' },
              { type: 'turn', callId: 'c9', turn: turn(0, 'assistant', '您好张先生，我是示例教育的小李。') },
              { type: 'turn', callId: 'c9', turn: turn(1, 'callee', '我再考虑一下吧。') },
            ]),
            endGate,
            ...sseChunks([
              { type: 'ended', call },
              {
                type: 'updated',
                call: { ...call, intentGrade: 'B', machineGrade: 'B', summary: '客户犹豫，需要再跟进。' },
              },
            ]),
            never(),
          ],
        };
      }
      // The editor's test chat opens too; it stays silent here.
      return { status: 200, chunks: [never()] };
    });
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(detail()),
      'GET /api/project/p1/assistants/a1/versions': ok([]),
      'POST /api/project/p1/calls/test': ok({ callId: 'c9' }),
      'POST /api/project/p1/calls/c9/hangup': ok({ hungUp: true }),
      'GET /api/project/p1/calls/c9': ok(ringingDetail(call)),
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.click(await screen.findByRole('button', { name: '模拟通话' }));
    const dialog = await screen.findByRole('dialog', { name: '模拟通话' });
    fireEvent.mouseDown(within(dialog).getByLabelText('模拟客户'));
    fireEvent.click(await screen.findByTitle('犹豫的客户'));
    fireEvent.change(within(dialog).getByLabelText('被叫号码'), { target: { value: '13800000009' } });
    fireEvent.change(within(dialog).getByLabelText('变量 客户姓名'), { target: { value: '李女士' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '开始模拟' }));

    const transcript = await within(dialog).findByRole('list', { name: '模拟通话内容' });
    expect(await within(transcript).findByText('我再考虑一下吧。')).toBeTruthy();
    expect(within(transcript).getByText('您好张先生，我是示例教育的小李。')).toBeTruthy();
    expect(within(dialog).getByText('通话中')).toBeTruthy();
    // While the call is live the callee can be hung up from here.
    fireEvent.click(within(dialog).getByRole('button', { name: '挂断' }));
    await waitFor(() =>
      expect(
        server?.requests.some((r) => r.method === 'POST' && r.url === '/api/project/p1/calls/c9/hangup'),
      ).toBe(true),
    );
    expect(server.requests.find((request) => request.method === 'POST')?.body).toEqual({
      assistantId: 'a1',
      persona: 'hesitant',
      calleeNumber: '13800000009',
      variables: { 客户姓名: '李女士', 产品名称: '少儿编程课' },
    });
    const stream = fetches.requests.find((request) => request.url.includes('/calls/events'));
    expect(stream?.url).toBe('/api/project/p1/calls/events?callId=c9');
    expect(stream?.headers.get('authorization')).toBe('Bearer tok-1');

    releaseEnd();

    expect(await within(dialog).findByText('已结束：正常结束')).toBeTruthy();
    expect(within(dialog).queryByRole('button', { name: '挂断' })).toBeNull();
    expect(await within(dialog).findByText('B 可能有意向')).toBeTruthy();
    expect(within(dialog).getByText('客户犹豫，需要再跟进。')).toBeTruthy();
    expect(within(dialog).getByRole('link', { name: '查看通话记录' }).getAttribute('href')).toBe(
      '/call-record/detail/c9',
    );

    fireEvent.click(within(dialog).getByRole('button', { name: '停止跟踪' }));
    await waitFor(() =>
      expect(within(dialog).getByRole('button', { name: '停止跟踪' }).hasAttribute('disabled')).toBe(true),
    );
  });
});

const number = (value: string, assistantId: string | null) => ({
  number: value,
  label: value === '02100000001' ? '上海客服热线' : '',
  enabled: true,
  inboundAssistantId: assistantId,
  inboundAssistantName: assistantId === 'a1' ? '课程回访小助手' : assistantId ? '售后接待' : null,
  createdAt: '2026-03-01T02:00:00.000Z',
});

describe('assistant test inbound call (模拟来电)', () => {
  it('dials one of the numbers bound to this assistant and shows the call live', async () => {
    startFakeFetch((request) =>
      request.url.startsWith('/api/project/p1/calls/events')
        ? {
            status: 200,
            chunks: [
              ...sseChunks([
                { type: 'answered', callId: 'c9', answeredAt: '2026-03-01T02:00:03.000Z' },
                {
                  type: 'turn',
                  callId: 'c9',
                  turn: turn(0, 'assistant', '您好，示例教育，请问有什么可以帮您？'),
                },
              ]),
              never(),
            ],
          }
        : { status: 200, chunks: [never()] },
    );
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(detail()),
      'GET /api/project/p1/numbers': ok([
        number('02100000001', 'a1'),
        number('02100000002', 'a2'),
        number('02100000003', null),
        number('02100000004', 'a1'),
      ]),
      'POST /api/project/p1/calls/test-inbound': ok({ callId: 'c9' }),
      'GET /api/project/p1/calls/c9': ok(ringingDetail({ ...call, direction: 'inbound' })),
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.click(await screen.findByRole('button', { name: '模拟来电' }));
    const dialog = await screen.findByRole('dialog', { name: '模拟来电' });
    expect(await within(dialog).findByText('来电由已发布的 v2 接听。', { exact: false })).toBeTruthy();
    fireEvent.mouseDown(within(dialog).getByLabelText('被叫号码'));
    // Only this assistant's numbers: the others would be answered by someone else, or not at all.
    const options = await screen.findAllByRole('option');
    expect(options.map((option) => option.textContent)).toEqual(['02100000001', '02100000004']);
    fireEvent.click(await screen.findByTitle('02100000004 · 由「课程回访小助手」接听'));
    fireEvent.click(within(dialog).getByRole('button', { name: '开始模拟' }));

    const transcript = await within(dialog).findByRole('list', { name: '模拟来电内容' });
    expect(await within(transcript).findByText('您好，示例教育，请问有什么可以帮您？')).toBeTruthy();
    expect(within(dialog).getByText('通话中')).toBeTruthy();
    expect(server.requests.find((request) => request.url.endsWith('/test-inbound'))?.body).toEqual({
      number: '02100000004',
      persona: 'interested',
      callerNumber: '',
    });
  });

  it('says when no number is bound to it, and where to bind one', async () => {
    startFakeFetch(() => ({ status: 200, chunks: [never()] }));
    server = serveAssistant({
      'GET /api/project/p1/assistants/a1': ok(detail()),
      'GET /api/project/p1/numbers': ok([number('02100000002', 'a2')]),
    });
    renderAssistant('/assistant/edit?id=a1');

    fireEvent.click(await screen.findByRole('button', { name: '模拟来电' }));
    const dialog = await screen.findByRole('dialog', { name: '模拟来电' });
    expect(await within(dialog).findByText('还没有号码绑定到这个小助手，来电无法接入。')).toBeTruthy();
    expect(within(dialog).getByRole('button', { name: '开始模拟' }).hasAttribute('disabled')).toBe(true);
    const link = within(dialog).getByRole('link', { name: '前往号码管理' });
    expect(link.getAttribute('href')).toBe('/ivr/numbers');
  });
});
