import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateFlow } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VirtualClock } from '../clock';
import { createFlowHttpClient } from './http-client';
import { MAX_SUBFLOW_DEPTH } from './interpreter';
import { buildFlow, heard, route, runScripted } from './testing/flows';
import { caller } from './testing/script-leg';
import type { FlowAssistantRequest, FlowHttpRequest, LoadedFlow } from './types';

describe('assistant node', () => {
  const flow = buildFlow(
    [
      ['start', 'start'],
      [
        'ai',
        'assistant',
        { assistantId: 'asst-1', version: 3, variables: [{ name: '来电号码', value: '{{caller}}' }] },
      ],
      ['after', 'play', { text: '意向{{assistant.grade}}，结束方式{{assistant.outcome}}。' }],
      ['human', 'transfer', { target: '4001234567' }],
      ['done', 'hangup', { reason: '小助手结束' }],
    ],
    [
      ['start', 'next', 'ai'],
      ['ai', 'next', 'after'],
      ['ai', 'transfer', 'human'],
      ['after', 'next', 'done'],
    ],
  );

  /** An assistant that says one line, hears one, and ends as told. */
  const assistantEnding =
    (outcome: 'completed' | 'transfer' | 'hangup' | 'failed', requests: FlowAssistantRequest[] = []) =>
    async (request: FlowAssistantRequest) => {
      requests.push(request);
      await request.onTurn({
        speaker: 'assistant',
        text: '您好，我是星河宽带的智能客服。',
        dtmf: null,
        startMs: 5000,
        endMs: 7000,
        interrupted: false,
        latency: null,
        segments: [],
      });
      if (outcome === 'hangup') (request.leg as { remoteHangup?: () => void }).remoteHangup?.();
      return {
        outcome,
        grade: 'A' as const,
        assistantId: request.assistantId,
        assistantName: '客服小星',
        version: 3,
      };
    };

  it('hands the call over with rendered variables and continues by next with the grade', async () => {
    const requests: FlowAssistantRequest[] = [];
    const { result, turns } = await runScripted({
      flow,
      deps: { runAssistant: assistantEnding('completed', requests) },
    });
    expect(requests[0]).toMatchObject({
      assistantId: 'asst-1',
      version: 3,
      variables: { 来电号码: '13800138000' },
    });
    expect(route(result)).toEqual(['start:next', 'ai:next', 'after:next', 'done:-']);
    expect(result.path[1]).toMatchObject({
      output: { 'assistant.grade': 'A', 'assistant.outcome': 'completed' },
      detail: '小助手「客服小星」结束，意向 A',
    });
    expect(heard(result)).toContain('意向A，结束方式completed。');
    expect(result.assistant).toMatchObject({ assistantId: 'asst-1', outcome: 'completed', grade: 'A' });
    // The assistant's turns are numbered into the call's one transcript.
    expect(turns[0]).toMatchObject({ index: 0, text: '您好，我是星河宽带的智能客服。' });
    expect(turns.map((t) => t.index)).toEqual(turns.map((_, i) => i));
  });

  it('a request for a person leaves by the transfer exit', async () => {
    const { result } = await runScripted({ flow, deps: { runAssistant: assistantEnding('transfer') } });
    expect(route(result)).toEqual(['start:next', 'ai:transfer', 'human:-']);
    expect(result.endReason).toBe('transferred');
  });

  it('the caller hanging up during the conversation ends the call in the node', async () => {
    const { result } = await runScripted({ flow, deps: { runAssistant: assistantEnding('hangup') } });
    expect(result).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee' });
    expect(route(result)).toEqual(['start:next', 'ai:-']);
    expect(result.variables['assistant.outcome']).toBe('hangup');
  });

  it('an assistant that cannot run does not drop the caller: the flow goes on', async () => {
    const { result } = await runScripted({
      flow,
      deps: {
        runAssistant: async () => {
          throw new Error('小助手未发布');
        },
      },
    });
    expect(route(result)).toEqual(['start:next', 'ai:next', 'after:next', 'done:-']);
    expect(result.path[1]?.detail).toBe('小助手运行失败：小助手未发布，继续流程');
    expect(result.variables['assistant.outcome']).toBe('failed');
  });
});

describe('transfer node', () => {
  const flow = (data: Record<string, unknown> = {}) =>
    buildFlow(
      [
        ['start', 'start'],
        ['desk', 'transfer', { target: '{{desk}}', ringTimeoutSec: 20, ...data }, '转人工'],
        ['busy', 'play', { text: '坐席忙。' }],
        ['noanswer', 'play', { text: '无人接听。' }],
        ['failed', 'play', { text: '转接失败。' }],
      ],
      [
        ['start', 'next', 'desk'],
        ['desk', 'busy', 'busy'],
        ['desk', 'no_answer', 'noanswer'],
        ['desk', 'failed', 'failed'],
      ],
    );
  const variables = { desk: '4001234567' };

  it('bridges the caller: transferred, with the caller id and ring timeout, the line left up', async () => {
    const { result, leg } = await runScripted({ flow: flow(), variables });
    expect(result).toMatchObject({ endReason: 'transferred', hangupBy: 'assistant', error: null });
    expect(result.transfer).toMatchObject({ number: '4001234567', ok: true });
    expect(leg.transfers).toEqual([{ number: '4001234567', callerId: '13800138000', ringTimeoutMs: 20_000 }]);
    expect(heard(result)).toEqual(['正在为您转接，请稍候。']);
    expect(result.path.at(-1)).toMatchObject({ nodeId: 'desk', exit: null, detail: '已转接 4001234567' });
    // The bridge owns the line now: the flow does not hang it up.
    expect(leg.ended).toBeNull();
  });

  it.each([
    ['busy', 'busy', '坐席忙。', '忙线'],
    ['no_answer', 'no_answer', '无人接听。', '无人接听'],
    ['failed', 'failed', '转接失败。', '转接失败'],
    // A line that gives no reason counts as failed.
    ['unknown', 'failed', '转接失败。', '转接失败'],
  ] as const)('%s → exit %s', async (outcome, exit, line, label) => {
    const { result } = await runScripted({ flow: flow(), variables, transfers: [outcome] });
    expect(result.path[1]).toMatchObject({ exit, output: { 'transfer.outcome': exit } });
    expect(result.path[1]?.detail).toContain(label);
    expect(result.transfer).toMatchObject({ ok: false });
    expect(heard(result).at(-1)).toBe(line);
  });

  it('a custom caller id or the dialled number is shown to the agent', async () => {
    const custom = await runScripted({
      flow: flow({ callerId: 'custom', callerIdNumber: '02161230000' }),
      variables,
    });
    expect(custom.leg.transfers[0]?.callerId).toBe('02161230000');
    const callee = await runScripted({ flow: flow({ callerId: 'callee' }), variables });
    expect(callee.leg.transfers[0]?.callerId).toBe('4008001234');
  });
});

describe('voicemail node', () => {
  const flow = buildFlow(
    [
      ['start', 'start'],
      ['vm', 'voicemail', { maxSeconds: 60 }, '留言'],
      ['thanks', 'hangup', { text: '留言已收到，再见。', reason: '已留言' }],
    ],
    [
      ['start', 'next', 'vm'],
      ['vm', 'next', 'thanks'],
    ],
  );

  it('records what the caller says until 5 s of silence, then goes on', async () => {
    const { result, leg } = await runScripted({
      flow,
      script: [caller.say('我家宽带坏了'), caller.say('请尽快回电'), caller.silence()],
    });
    expect(route(result)).toEqual(['start:next', 'vm:next', 'thanks:-']);
    expect(result.voicemail?.text).toBe('我家宽带坏了，请尽快回电');
    const prompt = result.turns[0];
    expect(prompt?.text).toBe('请在提示音后留言，留言完毕请挂机或按井号键。');
    expect(result.voicemail?.startMs).toBe(prompt?.endMs);
    // After speech, a listen waits 5 s of silence.
    expect(leg.listens.map((l) => l.timeoutMs)).toEqual([60_000, 5000, 5000]);
    const seconds = Number(result.variables['voicemail.seconds']);
    expect(seconds).toBe(
      Math.round(((result.voicemail?.endMs ?? 0) - (result.voicemail?.startMs ?? 0)) / 1000),
    );
    expect(seconds).toBeGreaterThanOrEqual(8);
    expect(result.path[1]?.detail).toBe(`留言 ${seconds} 秒`);
  });

  it('# ends the message at once', async () => {
    const { result } = await runScripted({ flow, script: [caller.say('麻烦回电'), caller.press('#')] });
    expect(result.voicemail?.text).toBe('麻烦回电');
    expect(result.path[1]?.detail).toMatch(/^留言 \d+ 秒（按 # 结束）$/);
    expect(result.endLabel).toBe('已留言');
  });

  it('a caller hanging up after the message: still recorded, the call ends as their hang-up', async () => {
    const { result } = await runScripted({ flow, script: [caller.say('请回电'), caller.hangUp(1000)] });
    expect(result).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee' });
    expect(result.voicemail).toMatchObject({ text: '请回电' });
    expect(route(result)).toEqual(['start:next', 'vm:-']);
    expect(result.path[1]?.output['voicemail.seconds']).toBeDefined();
  });

  it('nobody speaking until the maximum leaves no voicemail', async () => {
    const { result } = await runScripted({ flow, script: [caller.silence()] });
    expect(result.voicemail).toBeNull();
    expect(result.path[1]).toMatchObject({
      exit: 'next',
      detail: '未留言',
      output: { 'voicemail.seconds': '0' },
    });
  });
});

describe('sms node', () => {
  const flow = buildFlow(
    [
      ['start', 'start'],
      ['text', 'sms', { content: '您的报修单号为{{ticket}}。' }],
      ['bye', 'hangup'],
    ],
    [
      ['start', 'next', 'text'],
      ['text', 'next', 'bye'],
    ],
  );

  it('sends the rendered message to the caller', async () => {
    const { result, sms } = await runScripted({ flow, variables: { ticket: 'BX-1024' } });
    expect(sms).toEqual([{ to: '13800138000', content: '您的报修单号为BX-1024。' }]);
    expect(result.path[1]).toMatchObject({ exit: 'next', detail: '短信已发送至 13800138000' });
  });

  it('a failed send is noted in the step and the flow goes on', async () => {
    const { result } = await runScripted({
      flow,
      variables: { ticket: 'BX-1024' },
      deps: {
        sendSms: async () => {
          throw new Error('短信通道不可用');
        },
      },
    });
    expect(route(result)).toEqual(['start:next', 'text:next', 'bye:-']);
    expect(result.path[1]?.detail).toBe('短信发送失败：短信通道不可用');
    expect(result.endReason).toBe('completed');
  });
});

describe('http node against a local server', () => {
  let server: http.Server;
  let base = '';
  const hits: Array<{ path: string; method: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  let failuresLeft = 0;

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        hits.push({ path: req.url ?? '', method: req.method ?? '', headers: req.headers, body });
        const url = new URL(req.url ?? '/', 'http://x');
        if (url.pathname === '/flaky' && failuresLeft > 0) {
          failuresLeft--;
          res.writeHead(503).end('busy');
          return;
        }
        if (url.pathname === '/missing') {
          res.writeHead(404).end('no');
          return;
        }
        if (url.pathname === '/slow') {
          setTimeout(() => res.writeHead(200).end('{}'), 1000).unref();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        res.end(
          JSON.stringify({
            data: { balance: 88.5, items: [{ name: '千兆宽带' }], vip: true },
            echo: body ? JSON.parse(body) : null,
            query: url.searchParams.get('q'),
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    // fetch keeps connections alive; without this, close waits for their idle timeout.
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const httpFlow = (data: Record<string, unknown>) =>
    buildFlow(
      [
        ['start', 'start'],
        [
          'lookup',
          'http',
          {
            method: 'POST',
            headers: [{ name: 'X-Caller', value: '{{caller}}' }],
            body: '{"phone":"{{caller}}","said":"{{speech}}"}',
            timeoutMs: 2000,
            retries: 2,
            mappings: [
              { variable: 'balance', path: 'data.balance' },
              { variable: 'product', path: 'data.items.0.name' },
              { variable: 'said', path: 'echo.said' },
            ],
            ...data,
          },
          '查询账户',
        ],
        ['ok', 'play', { text: '余额{{balance}}元，产品{{product}}。' }],
        ['fail', 'play', { text: '查询失败，产品{{product}}。' }],
      ],
      [
        ['start', 'next', 'lookup'],
        ['lookup', 'success', 'ok'],
        ['lookup', 'failure', 'fail'],
      ],
    );

  /** The production client with private addresses allowed; real I/O holds the virtual clock. */
  const run = (
    data: Record<string, unknown>,
    variables: Record<string, string> = {},
    allowPrivate = true,
  ) => {
    const clock = new VirtualClock({ startAt: Date.parse('2026-11-18T10:00:00+08:00') });
    const client = createFlowHttpClient({ allowPrivate });
    return runScripted({
      flow: httpFlow(data),
      clock,
      variables,
      deps: { http: (request: FlowHttpRequest) => clock.track(client(request)) },
    });
  };

  it('success: rendered request, JSON-escaped body, mapped fields, status and time', async () => {
    hits.length = 0;
    const { result } = await run({ url: `${base}/account?q={{speech}}` }, { speech: '他说"你好"&再见' });
    expect(route(result)).toEqual(['start:next', 'lookup:success', 'ok:next']);
    const hit = hits[0];
    expect(hit?.method).toBe('POST');
    expect(hit?.headers['x-caller']).toBe('13800138000');
    expect(hit?.headers['content-type']).toBe('application/json');
    // The quote in what was said did not break the JSON; the & did not add a query parameter.
    expect(JSON.parse(hit?.body ?? '')).toEqual({ phone: '13800138000', said: '他说"你好"&再见' });
    expect(result.path[1]?.output).toMatchObject({
      balance: '88.5',
      product: '千兆宽带',
      said: '他说"你好"&再见',
      'http.status': '200',
    });
    expect(result.path[1]?.detail).toMatch(/^HTTP 200 · \d+ ms$/);
    expect(Number(result.variables['http.ms'])).toBeGreaterThanOrEqual(0);
    expect(heard(result)).toEqual(['余额88.5元，产品千兆宽带。']);
  });

  it('a 5xx is retried; once the retries are spent, failure with the default result', async () => {
    hits.length = 0;
    failuresLeft = 10;
    const { result } = await run({
      url: `${base}/flaky`,
      defaultResult: '{"data":{"items":[{"name":"未知产品"}]}}',
    });
    expect(hits).toHaveLength(3);
    expect(route(result)).toEqual(['start:next', 'lookup:failure', 'fail:next']);
    expect(result.path[1]?.output).toMatchObject({ product: '未知产品', 'http.status': '503' });
    expect(result.path[1]?.detail).toMatch(/^HTTP 503 · \d+ ms，共请求 3 次，使用默认结果$/);
    expect(heard(result)).toEqual(['查询失败，产品未知产品。']);
  });

  it('a 5xx that recovers on a retry succeeds', async () => {
    hits.length = 0;
    failuresLeft = 1;
    const { result } = await run({ url: `${base}/flaky` });
    expect(hits).toHaveLength(2);
    expect(result.path[1]).toMatchObject({ exit: 'success' });
    expect(result.path[1]?.detail).toContain('共请求 2 次');
  });

  it('a 4xx is not retried', async () => {
    hits.length = 0;
    const { result } = await run({ url: `${base}/missing` });
    expect(hits).toHaveLength(1);
    expect(result.path[1]).toMatchObject({ exit: 'failure', output: { 'http.status': '404' } });
  });

  it('a timeout is retried, then fails with the reason in the step', async () => {
    hits.length = 0;
    const { result } = await run({ url: `${base}/slow`, timeoutMs: 150, retries: 1 });
    expect(hits).toHaveLength(2);
    expect(result.path[1]).toMatchObject({ exit: 'failure', output: { 'http.status': '' } });
    expect(result.path[1]?.detail).toContain('请求超时（150 ms）');
  });

  it('a private address is refused without a request unless the operator allows it', async () => {
    hits.length = 0;
    const { result } = await run({ url: `${base}/account` }, {}, false);
    expect(hits).toHaveLength(0);
    expect(result.path[1]).toMatchObject({ exit: 'failure' });
    expect(result.path[1]?.detail).toContain('请求地址为内网地址，已拒绝');
  });
});

describe('subflow node', () => {
  const main = buildFlow(
    [
      ['start', 'start'],
      ['sub', 'subflow', { flowId: 'flow-sub' }, '查询子流程'],
      ['back', 'play', { text: '回到主流程，结果{{result}}。' }],
      ['bye', 'hangup', { reason: '主流程结束' }],
    ],
    [
      ['start', 'next', 'sub'],
      ['sub', 'next', 'back'],
      ['back', 'next', 'bye'],
    ],
  );
  const returning = buildFlow(
    [
      ['start', 'start'],
      ['set', 'set', { assignments: [{ variable: 'result', value: '已查询{{caller}}' }] }],
      ['say', 'play', { text: '这里是子流程。' }],
    ],
    [
      ['start', 'next', 'set'],
      ['set', 'next', 'say'],
    ],
    { flowId: 'flow-sub', name: '查询' },
  );

  it('runs the subflow with the same variables and comes back to next', async () => {
    const { result, steps } = await runScripted({
      flow: main,
      deps: { loadSubflow: async (id) => (id === 'flow-sub' ? returning : Promise.reject(new Error('?'))) },
    });
    expect(route(result)).toEqual([
      'start:next',
      'start:next',
      'set:next',
      'say:next',
      'sub:next',
      'back:next',
      'bye:-',
    ]);
    expect(result.path.map((s) => s.flowId)).toEqual([
      null,
      'flow-sub',
      'flow-sub',
      'flow-sub',
      null,
      null,
      null,
    ]);
    expect(result.path[4]).toMatchObject({ nodeName: '查询子流程', detail: '子流程「查询」已返回' });
    // The subflow node's step spans the subflow's time.
    expect(result.path[4]?.atMs).toBeLessThanOrEqual(result.path[1]?.atMs ?? 0);
    expect(result.path[4]?.durationMs).toBeGreaterThan(0);
    expect(heard(result)).toEqual(['这里是子流程。', '回到主流程，结果已查询13800138000。']);
    expect(result).toMatchObject({ endReason: 'completed', endLabel: '主流程结束' });
    expect(steps.map((s) => s.step)).toEqual(result.path);
  });

  it('a 返回上级流程 node returns from a subflow that passes validation, and ends a flow called directly', async () => {
    const published = buildFlow(
      [
        ['start', 'start'],
        ['say', 'play', { text: '这里是子流程。' }],
        ['ret', 'return'],
      ],
      [
        ['start', 'next', 'say'],
        ['say', 'next', 'ret'],
      ],
      { flowId: 'flow-sub', name: '查询' },
    );
    // Unlike a loose end, the return node lets the subflow itself be published.
    expect(validateFlow(published.graph).filter((i) => i.severity === 'error')).toEqual([]);
    const called = await runScripted({ flow: main, deps: { loadSubflow: async () => published } });
    expect(route(called.result)).toEqual([
      'start:next',
      'start:next',
      'say:next',
      'ret:-',
      'sub:next',
      'back:next',
      'bye:-',
    ]);
    expect(called.result.path[3]).toMatchObject({ nodeType: 'return', detail: '返回上级流程', exit: null });
    expect(called.result).toMatchObject({ endReason: 'completed', endLabel: '主流程结束' });

    const direct = await runScripted({ flow: published });
    expect(route(direct.result)).toEqual(['start:next', 'say:next', 'ret:-']);
    expect(direct.result.path[2]?.detail).toBe('流程结束');
    expect(direct.result).toMatchObject({ endReason: 'completed', hangupBy: 'assistant' });
  });

  it("a subflow's hangup ends the call; the subflow node has no exit", async () => {
    const ending = buildFlow(
      [
        ['start', 'start'],
        ['end', 'hangup', { text: '子流程挂机。', reason: '子流程结束' }],
      ],
      [['start', 'next', 'end']],
      { flowId: 'flow-sub', name: '结束' },
    );
    const { result } = await runScripted({ flow: main, deps: { loadSubflow: async () => ending } });
    expect(result).toMatchObject({ endReason: 'completed', endLabel: '子流程结束' });
    expect(route(result)).toEqual(['start:next', 'start:next', 'end:-', 'sub:-']);
    expect(result.path.at(-1)?.detail).toContain('通话在子流程中结束');
  });

  it('the caller hanging up inside a subflow marks both the node and the subflow node', async () => {
    const waiting = buildFlow(
      [
        ['start', 'start'],
        [
          'menu',
          'menu',
          {
            prompt: '请选择',
            options: [
              { key: '1', label: '' },
              { key: '2', label: '' },
            ],
          },
        ],
      ],
      [['start', 'next', 'menu']],
      { flowId: 'flow-sub', name: '子菜单' },
    );
    const { result } = await runScripted({
      flow: main,
      script: [caller.hangUp(1000)],
      deps: { loadSubflow: async () => waiting },
    });
    expect(result.endReason).toBe('callee_hangup');
    expect(route(result)).toEqual(['start:next', 'start:next', 'menu:-', 'sub:-']);
    expect(result.path[2]).toMatchObject({ flowId: 'flow-sub' });
  });

  it(`subflows nested deeper than ${MAX_SUBFLOW_DEPTH} fail the call, reported`, async () => {
    const recursive: LoadedFlow = { ...main, flowId: 'flow-loop', name: '自调用' };
    const { result } = await runScripted({ flow: main, deps: { loadSubflow: async () => recursive } });
    expect(result).toMatchObject({ endReason: 'failed', hangupBy: 'system' });
    expect(result.error).toBeInstanceOf(Error);
    const subSteps = result.path.filter((s) => s.nodeType === 'subflow');
    expect(subSteps).toHaveLength(MAX_SUBFLOW_DEPTH + 1);
    expect(subSteps.every((s) => s.exit === null)).toBe(true);
    expect(subSteps[0]?.detail).toContain(`子流程嵌套超过 ${MAX_SUBFLOW_DEPTH} 层`);
  });

  it('a subflow that cannot be loaded fails the call with the reason', async () => {
    const { result } = await runScripted({
      flow: main,
      deps: {
        loadSubflow: async () => {
          throw new Error('子流程未发布');
        },
      },
    });
    expect(result).toMatchObject({ endReason: 'failed', hangupBy: 'system' });
    expect(result.path.at(-1)).toMatchObject({
      nodeId: 'sub',
      exit: null,
      detail: '子流程无法加载：子流程未发布',
    });
  });
});
