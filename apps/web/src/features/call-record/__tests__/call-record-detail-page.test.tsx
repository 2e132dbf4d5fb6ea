import { type FlowStep, flowGraph } from '@callpilot/contracts';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { useQueryCacheStore } from '@/stores/query-cache-store';
import { sseChunks } from '@/test/fake-fetch';
import { ok } from '@/test/fake-server';
import {
  CALLS,
  gate,
  makeDetail,
  makeTurn,
  renderCallRecord,
  serveCalls,
  serveEvents,
  signIn,
} from './call-record-fixtures';

type Listener = (...args: unknown[]) => void;

// wavesurfer draws on a canvas and decodes audio, neither of which jsdom has; the stand-in records
// what the page asks of the player and lets a test fire its events.
const surfers = vi.hoisted(() => {
  const created: {
    url: string;
    setTime: ReturnType<typeof vi.fn>;
    play: ReturnType<typeof vi.fn>;
    emit: (name: string, ...args: unknown[]) => void;
  }[] = [];
  return { created };
});

vi.mock('wavesurfer.js', () => ({
  default: {
    create: (options: { url: string }) => {
      const listeners = new Map<string, Listener[]>();
      const emit = (name: string, ...args: unknown[]) => {
        for (const listener of listeners.get(name) ?? []) listener(...args);
      };
      const surfer = {
        url: options.url,
        setTime: vi.fn(),
        play: vi.fn(async () => emit('play')),
        emit,
        on: (name: string, listener: Listener) => {
          listeners.set(name, [...(listeners.get(name) ?? []), listener]);
          return () => {};
        },
        playPause: vi.fn(),
        destroy: vi.fn(),
      };
      surfers.created.push(surfer);
      return surfer;
    },
  },
}));

let server: ReturnType<typeof serveCalls> | undefined;

beforeEach(() => {
  signIn();
  surfers.created.length = 0;
  useQueryCacheStore.setState({
    callRecordQueryCache: null,
    callTaskQueryCache: null,
    callDetailBackUrl: null,
  });
  serveEvents(() => ({ status: 200, chunks: [gate().promise] }));
});
afterEach(() => {
  server?.stop();
  server = undefined;
});

const common = {
  [`GET ${CALLS}/tags`]: ok(['高意向']),
  [`GET ${CALLS}/c1/recording-url`]: ok({
    url: 'https://rec.example/c1.wav?sig=x',
    expiresAt: '2026-03-01T02:10:00.000Z',
  }),
  [`GET ${CALLS}/c1/neighbors`]: ok({ previousId: null, nextId: 'c2' }),
};

const transcript = () => screen.getByRole('list', { name: '对话记录' });

describe('call record detail', () => {
  it('lists the SMS the call triggered, linking to the records filtered by the call', async () => {
    const sms = {
      id: 'sms-1',
      phone: '13800000001',
      signatureName: '云呼科技',
      templateId: 't1',
      templateName: '课程资料',
      templateType: 'notification',
      variables: {},
      content: '【云呼科技】课程资料已发送，请查收。',
      parts: 1,
      provider: 'outbox',
      providerMessageId: null,
      status: 'delivered',
      errorCode: null,
      errorMessage: null,
      timeline: [],
      source: 'follow_up',
      callId: 'c1',
      taskId: null,
      batchId: null,
      ruleId: 'r1',
      sendAfter: '2026-03-01T02:05:00.000Z',
      createdAt: '2026-03-01T02:05:00.000Z',
      submittedAt: null,
      finishedAt: null,
    };
    server = serveCalls({
      ...common,
      [`GET ${CALLS}/c1`]: ok(makeDetail()),
      'GET /api/project/p1/sms/messages': (request) =>
        request.config.params?.callId === 'c1'
          ? ok({ items: [sms], total: 1, totalCapped: false, page: 1, pageSize: 5 })
          : undefined,
    });
    renderCallRecord('/call-record/detail/c1');
    const card = await screen.findByRole('region', { name: '通话短信' });
    expect(within(card).getByText('【云呼科技】课程资料已发送，请查收。')).toBeTruthy();
    expect(within(card).getByText('成功 · 10:05:00')).toBeTruthy();
    expect(within(card).getByRole('link', { name: '在发送记录中查看' }).getAttribute('href')).toBe(
      '/sms/record?callId=c1',
    );
  });

  it('draws a real line’s reply delay from the audio, and says when a fallback answered', async () => {
    const detail = makeDetail();
    detail.turns[2] = {
      ...detail.turns[2]!,
      latency: {
        recognitionMs: 150,
        retrievalMs: 20,
        brainMs: 1400,
        firstTokenMs: 300,
        synthesisMs: 160,
        endpointMs: 300,
        firstSentenceMs: 420,
        firstAudioMs: 150,
        replyStartMs: 1080,
        fallbacks: ['synthesis'],
      },
    };
    server = serveCalls({ ...common, [`GET ${CALLS}/c1`]: ok(detail) });
    renderCallRecord('/call-record/detail/c1');
    const list = await screen.findByRole('list', { name: '对话记录' });
    expect(await within(list).findByText('开口延迟 1080 ms')).toBeTruthy();
    for (const stage of [
      '断句 300 ms',
      '识别 150 ms',
      '检索 20 ms',
      '首句 420 ms',
      '合成首包 150 ms',
      '发送 40 ms',
    ]) {
      expect(within(list).getByText(stage)).toBeTruthy();
    }
    // The whole brain (1400 ms) is not what the caller waited for once replies stream.
    expect(within(list).queryByText('大模型 1400 ms')).toBeNull();
    expect(within(list).getByText('合成已切换备用音色')).toBeTruthy();
  });

  it('shows the model’s rewriting and re-ranking inside retrieval, and a question the knowledge refused', async () => {
    const detail = makeDetail();
    detail.turns[2] = {
      ...detail.turns[2]!,
      latency: {
        recognitionMs: 120,
        retrievalMs: 530,
        brainMs: 800,
        firstTokenMs: 300,
        synthesisMs: 200,
        rewriteMs: 180,
        rerankMs: 320,
      },
    };
    detail.turns.push(
      makeTurn({ index: 4, speaker: 'callee', text: '你们周末营业吗' }),
      makeTurn({
        index: 5,
        text: '抱歉，这个问题我需要确认一下，稍后会有专人联系您。',
        latency: { recognitionMs: 100, retrievalMs: 12, brainMs: 5, firstTokenMs: 5, synthesisMs: 150 },
        segments: [
          {
            id: 's9',
            knowledgeBaseId: 'kb1',
            documentName: '报修说明.md',
            content: '报修热线 24 小时受理',
            score: 0.14,
            used: false,
          },
        ],
      }),
    );
    server = serveCalls({ ...common, [`GET ${CALLS}/c1`]: ok(detail) });
    renderCallRecord('/call-record/detail/c1');
    const list = await screen.findByRole('list', { name: '对话记录' });
    expect(await within(list).findByText('改写 180 ms')).toBeTruthy();
    expect(within(list).getByText('检索 30 ms')).toBeTruthy();
    expect(within(list).getByText('重排 320 ms')).toBeTruthy();
    // The stages still add up to the whole turn.
    expect(within(list).getByText('合计 1650 ms')).toBeTruthy();
    // Turns without the model show no such stage.
    expect(within(list).getAllByText(/^改写 /)).toHaveLength(1);

    expect(within(list).getByText('知识库拒答（置信度 0.14）')).toBeTruthy();
    expect(within(list).getByText('最接近的内容：报修说明.md')).toBeTruthy();
    // The refused candidate is not shown as knowledge the reply used.
    expect(within(list).getAllByText(/^引用知识/)).toHaveLength(1);
  });

  it('shows the facts and the transcript, and plays from the turn clicked', async () => {
    server = serveCalls({ ...common, [`GET ${CALLS}/c1`]: ok(makeDetail()) });
    renderCallRecord('/call-record/detail/c1');

    expect(
      await within(await screen.findByRole('list', { name: '对话记录' })).findByText('学费多少钱？'),
    ).toBeTruthy();
    const facts = screen.getByRole('region', { name: '通话信息' });
    expect(within(facts).getByText('课程回访小助手（v2）')).toBeTruthy();
    expect(within(facts).getByText('小助手挂断')).toBeTruthy();
    expect(within(facts).getByText('02:05')).toBeTruthy();
    expect(within(transcript()).getByText('按键：1')).toBeTruthy();
    expect(within(transcript()).getByText('合计 1150 ms')).toBeTruthy();
    expect(within(transcript()).getByText('引用知识（1）')).toBeTruthy();
    expect(screen.getByText('客户主动询问价格并约试听')).toBeTruthy();
    expect(screen.getByText('少儿编程课')).toBeTruthy();

    await waitFor(() => expect(surfers.created).toHaveLength(1));
    const surfer = surfers.created[0]!;
    expect(surfer.url).toBe('https://rec.example/c1.wav?sig=x');

    fireEvent.click(within(transcript()).getByText('学费多少钱？'));
    expect(surfer.setTime).toHaveBeenCalledWith(5);
    expect(surfer.play).toHaveBeenCalled();

    // Playback reaching 10.5 s is inside the third turn (10–14 s): it is the one highlighted.
    act(() => surfer.emit('timeupdate', 10.5));
    const current = within(transcript())
      .getAllByRole('listitem')
      .filter((item) => item.getAttribute('aria-current') === 'true');
    expect(current).toHaveLength(1);
    expect(within(current[0]!).getByText('学费是 2980 元，可以分 3 期付款。')).toBeTruthy();
  });

  it('lands on the turn a link names (?turn=N): scrolled to, focused and marked', async () => {
    // jsdom does not lay out, so it has no scrollIntoView: record who asks for it, then take it away.
    const scrolled: Element[] = [];
    Object.defineProperty(HTMLElement.prototype, 'scrollIntoView', {
      configurable: true,
      value(this: HTMLElement) {
        scrolled.push(this);
      },
    });
    onTestFinished(() => {
      delete (HTMLElement.prototype as Partial<HTMLElement>).scrollIntoView;
    });
    server = serveCalls({ ...common, [`GET ${CALLS}/c1`]: ok(makeDetail()) });
    renderCallRecord('/call-record/detail/c1?turn=1');

    const question = await within(await screen.findByRole('list', { name: '对话记录' })).findByText(
      '学费多少钱？',
    );
    const turn = question.closest('li') as HTMLElement;
    await waitFor(() => expect(document.activeElement).toBe(turn));
    expect(turn.getAttribute('aria-current')).toBe('location');
    expect(scrolled).toEqual([turn]);
    // Only that turn is marked.
    const marked = within(transcript())
      .getAllByRole('listitem')
      .filter((item) => item.hasAttribute('aria-current'));
    expect(marked).toEqual([turn]);
  });

  it('ignores a turn the call does not have, or one that is not a number', async () => {
    server = serveCalls({ ...common, [`GET ${CALLS}/c1`]: ok(makeDetail()) });
    renderCallRecord('/call-record/detail/c1?turn=abc');
    await within(await screen.findByRole('list', { name: '对话记录' })).findByText('学费多少钱？');
    expect(
      within(transcript())
        .getAllByRole('listitem')
        .filter((item) => item.hasAttribute('aria-current')),
    ).toEqual([]);
  });

  it('re-grades by hand and shows who did it', async () => {
    server = serveCalls({
      ...common,
      [`GET ${CALLS}/c1`]: ok(makeDetail()),
      [`PUT ${CALLS}/c1/grade`]: ok(
        makeDetail({
          intentGrade: 'C',
          humanGrade: 'C',
          humanGradedBy: '王小明',
          humanGradedAt: '2026-03-01T03:00:00.000Z',
        }),
      ),
    });
    renderCallRecord('/call-record/detail/c1');
    await screen.findByText('客户主动询问价格并约试听');

    fireEvent.mouseDown(screen.getByLabelText('人工评级'));
    fireEvent.click(await screen.findByTitle('C 无明确意向'));

    expect(await screen.findByText(/王小明 于 .* 复核/)).toBeTruthy();
    expect(server.requests.find((request) => request.method === 'PUT')?.body).toEqual({ grade: 'C' });
  });

  it('walks to the next call of the cached list and goes back to it', async () => {
    useQueryCacheStore.getState().setCallDetailBackUrl('/call-record/list?from=menu');
    useQueryCacheStore.getState().setQueryCache(
      'callRecordQueryCache',
      JSON.stringify({
        filters: {
          direction: 'inbound',
          endReason: ['busy'],
          intentGrade: [],
          tags: [],
          sort: 'talkSeconds',
          order: 'asc',
        },
        page: 2,
        timestamp: Date.now(),
      }),
    );
    server = serveCalls({
      ...common,
      [`GET ${CALLS}/c1`]: ok(makeDetail()),
      [`GET ${CALLS}/c2`]: ok(makeDetail({ id: 'c2', calleeNumber: '13900000002', recording: 'none' })),
      [`GET ${CALLS}/c2/neighbors`]: ok({ previousId: 'c1', nextId: null }),
    });
    const router = renderCallRecord('/call-record/detail/c1');
    await screen.findByText('13800000001');
    const next = await screen.findByRole('button', { name: '下一条' });
    await waitFor(() => expect(next.hasAttribute('disabled')).toBe(false));
    expect(screen.getByRole('button', { name: '上一条' }).hasAttribute('disabled')).toBe(true);
    expect(
      server.requests.find((request) => request.url === `${CALLS}/c1/neighbors`)?.config.params,
    ).toMatchObject({
      direction: 'inbound',
      endReason: 'busy',
      sort: 'talkSeconds',
      order: 'asc',
    });

    fireEvent.click(next);

    expect(await screen.findByText('13900000002')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/call-record/detail/c2');
    expect(screen.getByText('无录音（未接通）')).toBeTruthy();
    await waitFor(() =>
      expect(screen.getByRole('button', { name: '上一条' }).hasAttribute('disabled')).toBe(false),
    );
    expect(screen.getByRole('button', { name: '下一条' }).hasAttribute('disabled')).toBe(true);

    fireEvent.click(screen.getByRole('button', { name: '返回' }));
    await waitFor(() => expect(router.state.location.pathname).toBe('/call-record/list'));
    expect(router.state.location.search).toBe('?from=menu&back=1');
  });

  it('follows a call in progress: turns appear as they are spoken', async () => {
    const release = gate();
    serveEvents(() => ({
      status: 200,
      chunks: [
        release.promise,
        ...sseChunks([
          { type: 'turn', callId: 'c1', turn: makeTurn({ index: 1, text: '你们在哪里上课？' }) },
        ]),
        gate().promise,
      ],
    }));
    server = serveCalls({
      ...common,
      [`GET ${CALLS}/c1`]: ok(
        makeDetail({
          status: 'in_progress',
          endReason: null,
          recording: 'pending',
          turns: [makeTurn({ index: 0, text: '您好' })],
        }),
      ),
    });
    renderCallRecord('/call-record/detail/c1');
    expect(await screen.findByText('通话进行中，结束后可收听录音。')).toBeTruthy();
    expect(within(transcript()).getByText('您好')).toBeTruthy();

    release.open();

    expect(await within(transcript()).findByText('你们在哪里上课？')).toBeTruthy();
  });

  describe('流程路径', () => {
    const step = (
      overrides: Partial<FlowStep> & Pick<FlowStep, 'nodeId' | 'nodeType' | 'nodeName'>,
    ): FlowStep => ({
      atMs: 0,
      durationMs: 0,
      exit: 'next',
      input: null,
      output: {},
      detail: '',
      flowId: null,
      ...overrides,
    });
    const hotlinePath = {
      flowId: 'f1',
      flowName: '星河宽带客服热线',
      flowVersion: 3,
      steps: [
        step({ nodeId: 'start', nodeType: 'start', nodeName: '' }),
        step({
          nodeId: 'hours',
          nodeType: 'condition',
          nodeName: '工作时间',
          atMs: 1200,
          exit: 'branch:open',
        }),
        step({
          nodeId: 'menu',
          nodeType: 'menu',
          nodeName: '主菜单',
          atMs: 6500,
          durationMs: 8000,
          input: '2',
          exit: 'key:2',
          detail: '重试 1 次',
        }),
        step({
          nodeId: 'lookup',
          nodeType: 'http',
          nodeName: '查询账户',
          atMs: 15_000,
          exit: 'success',
          output: { balance: '35.50' },
          detail: 'HTTP 200 · 132 ms',
        }),
        step({
          nodeId: 'vm',
          nodeType: 'voicemail',
          nodeName: '故障留言',
          atMs: 20_000,
          durationMs: 30_000,
          exit: null,
          output: { 'voicemail.seconds': '20' },
        }),
      ],
    };
    // The live version's graph names the branches and keys the path took.
    const graph = flowGraph.parse({
      nodes: [
        { id: 'start', type: 'start' },
        { id: 'hours', type: 'condition', data: { branches: [{ id: 'open', name: '工作时间内' }] } },
        {
          id: 'menu',
          type: 'menu',
          data: {
            options: [
              { key: '1', label: '账单' },
              { key: '2', label: '报修' },
            ],
          },
        },
        { id: 'lookup', type: 'http' },
        { id: 'vm', type: 'voicemail' },
      ],
      edges: [],
    });

    it('shows each node the call went through, where the caller hung up, and plays the voicemail', async () => {
      server = serveCalls({
        ...common,
        [`GET ${CALLS}/c1`]: ok(
          makeDetail({ direction: 'inbound', hangupBy: 'callee', flow: hotlinePath, turns: [] }),
        ),
        'GET /api/project/p1/flows/f1/versions/3': ok(graph),
      });
      renderCallRecord('/call-record/detail/c1');

      const path = await screen.findByRole('list', { name: '流程路径' });
      const steps = within(path).getAllByRole('listitem');
      expect(steps.map((item) => item.querySelector('.font-medium')?.textContent)).toEqual([
        '开始',
        '工作时间',
        '主菜单',
        '查询账户',
        '故障留言',
      ]);
      const [, hours, menu, lookup, voicemail] = steps as [
        HTMLElement,
        HTMLElement,
        HTMLElement,
        HTMLElement,
        HTMLElement,
      ];
      expect(within(hours).getByText('条件分支')).toBeTruthy();
      expect(await within(hours).findByText('→ 工作时间内')).toBeTruthy();
      expect(within(menu).getByText('00:06')).toBeTruthy();
      expect(within(menu).getByText('2').parentElement?.textContent).toBe('按键：2');
      expect(within(menu).getByText('→ 2 报修')).toBeTruthy();
      expect(within(menu).getByText('重试 1 次')).toBeTruthy();
      expect(within(lookup).getByText('HTTP 200 · 132 ms')).toBeTruthy();
      expect(within(lookup).getByText('balance = 35.50')).toBeTruthy();
      expect(within(lookup).getByText('→ 成功')).toBeTruthy();
      expect(within(voicemail).getByText('在此挂断')).toBeTruthy();
      expect(within(path).getAllByText(/在此/)).toHaveLength(1);

      const badge = screen.getByRole('link', { name: '流程 星河宽带客服热线 v3' });
      expect(badge.getAttribute('href')).toBe('/ivr/edit/f1');
      expect(screen.queryByText('草稿测试')).toBeNull();

      await waitFor(() => expect(surfers.created).toHaveLength(1));
      fireEvent.click(within(voicemail).getByRole('button', { name: '播放留言' }));
      // The prompt came first: the 20 s message is the last 20 s of the 30 s in the node.
      expect(surfers.created[0]?.setTime).toHaveBeenCalledWith(30);
      expect(surfers.created[0]?.play).toHaveBeenCalled();
    });

    it('marks a 模拟来电 of the draft and where the flow itself ended the call', async () => {
      server = serveCalls({
        ...common,
        [`GET ${CALLS}/c1`]: ok(
          makeDetail({
            direction: 'inbound',
            hangupBy: 'system',
            recording: 'pending',
            flow: {
              flowId: 'f1',
              flowName: '星河宽带客服热线',
              flowVersion: null,
              steps: [
                step({ nodeId: 'menu', nodeType: 'menu', nodeName: '主菜单', input: '9', exit: 'invalid' }),
                step({
                  nodeId: 'bye',
                  nodeType: 'hangup',
                  nodeName: '结束',
                  atMs: 4000,
                  exit: null,
                  detail: '非工作时间',
                }),
              ],
            },
          }),
        ),
      });
      renderCallRecord('/call-record/detail/c1');

      const path = await screen.findByRole('list', { name: '流程路径' });
      expect(within(path).getByText('→ 输入错误')).toBeTruthy();
      expect(within(path).getByText('在此结束')).toBeTruthy();
      expect(within(path).queryByText('在此挂断')).toBeNull();
      // No recording to seek in yet.
      expect(within(path).queryByRole('button', { name: '播放留言' })).toBeNull();
      expect(screen.getByRole('link', { name: '流程 星河宽带客服热线' }).getAttribute('href')).toBe(
        '/ivr/edit/f1',
      );
      expect(screen.getByText('草稿测试')).toBeTruthy();
      // A draft may have changed since the call: its graph is not asked for.
      expect(server.requests.some((request) => request.url.includes('/flows/'))).toBe(false);
    });
  });
});
