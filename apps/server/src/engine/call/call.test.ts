import type { SimPersona } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from '../../../test/openai-compatible-server';
import { answerCall } from './answer-call';
import type { CallPorts } from './ports';
import { placeCall } from './run-call';
import { depsWith, followUpConfig, memoryPorts } from './test-support';

/**
 * The engine's one way a call runs, outbound and inbound, over in-memory ports: what it writes,
 * in which order, and what it leaves to the modules. The HTTP-level behaviour is tested in
 * modules/calls/inbound.test.ts.
 */

const config = followUpConfig;
const ports = memoryPorts;

/** A simulated caller dials 4008001234 and the engine answers it as the runtime would. */
async function callIn(
  callPorts: CallPorts,
  persona: SimPersona,
  callId: string,
  shared?: ReturnType<typeof depsWith>,
) {
  const { clock, carrier, deps } = shared ?? depsWith(callPorts);
  let handled: Promise<unknown> = Promise.resolve(null);
  const off = carrier.onInbound((offer) => {
    if (offer.callId === callId) handled = answerCall(deps, offer);
  });
  const heard = await clock.run(
    carrier.simulateInbound({ callId, from: '13900000001', to: '4008001234', persona }),
  );
  off();
  const outcome = await clock.run(handled);
  return { heard, outcome };
}

describe('inbound calls in the engine', () => {
  it('answers with the bound assistant: record, answer, turns, end, analysis, recording, in that order', async () => {
    const { callPorts, memory } = ports();
    const { heard, outcome } = await callIn(callPorts, 'interested', 'in-1');
    expect(heard.answered).toBe(true);
    expect(outcome).toMatchObject({ callId: 'in-1' });
    const call = memory.calls.get('in-1');
    expect(call).toMatchObject({
      direction: 'inbound',
      callerNumber: '13900000001',
      calleeNumber: '4008001234',
      assistantName: '回访助手',
      assistantVersion: 3,
      status: 'ended',
    });
    expect(memory.writes).toEqual([
      'create',
      'answered',
      'turn',
      `end ${call?.endReason}`,
      'analysis',
      'after call',
      'recording',
    ]);
  });

  it('refuses a number nobody answers, records it as 号码未配置呼入, and ignores numbers not ours', async () => {
    const unbound = ports({ route: { projectId: 'p1', assistantId: null, flowId: null, callinLimit: 5 } });
    const refused = await callIn(unbound.callPorts, 'interested', 'in-2');
    expect(refused.heard).toEqual({ answered: false, cause: 'unavailable' });
    expect(unbound.memory.calls.get('in-2')).toMatchObject({ status: 'ended', endReason: 'not_bound' });

    const foreign = ports({ route: null });
    const unknown = await callIn(foreign.callPorts, 'interested', 'in-3');
    expect(unknown.heard).toEqual({ answered: false, cause: 'unavailable' });
    expect(foreign.memory.calls.size).toBe(0);
  });

  it('beyond concurrentCallin the caller hears busy and the call is recorded as 超出呼入并发', async () => {
    const { callPorts, memory } = ports({
      route: { projectId: 'p1', assistantId: 'a1', flowId: null, callinLimit: 1 },
    });
    const shared = depsWith(callPorts);
    // The first caller stays on the line (silent) while the second one calls.
    let firstHandled: Promise<unknown> = Promise.resolve();
    const off = shared.carrier.onInbound((offer) => {
      if (offer.callId === 'first') firstHandled = answerCall(shared.deps, offer);
    });
    const first = shared.carrier.simulateInbound({
      callId: 'first',
      from: '1',
      to: '4008001234',
      persona: 'silent',
    });
    await shared.clock.run(first);
    off();
    await shared.clock.advance(1000);
    expect(memory.calls.get('first')?.status).toBe('in_progress');
    const second = await callIn(callPorts, 'interested', 'second', shared);
    expect(second.heard).toEqual({ answered: false, cause: 'busy' });
    expect(memory.calls.get('second')).toMatchObject({ status: 'ended', endReason: 'callin_limit' });
    await shared.clock.run(firstHandled);
  });
});

describe('after the call', () => {
  let server: OpenAICompatibleServer;
  beforeAll(async () => {
    server = await startOpenAICompatibleServer();
  });
  afterAll(() => server.close());

  it("records the brain's SMS request after the analysis, addressed to the other party", async () => {
    server.replyWith((request) =>
      request.body.tools
        ? {
            content: '好的，地址已经发到您手机上了，再见。',
            toolCalls: [
              { name: 'send_sms', arguments: '{"content":"门店地址：朝阳区建国路 88 号"}' },
              { name: 'end_call', arguments: '{"reason":"已发送地址"}' },
            ],
          }
        : { content: '{"grade":"B","reason":"客户要了地址","summary":"发送门店地址","fields":{}}' },
    );
    const cfg = config();
    const { callPorts, memory } = ports({
      providerUrl: server.baseUrl,
      cfg: { ...cfg, brain: { ...cfg.brain, providerId: 'provider-1' } },
    });
    const { deps, clock } = depsWith(callPorts, 3);
    const outcome = await clock.run(
      placeCall(deps, {
        projectId: 'p1',
        assistantId: 'a1',
        callerNumber: '02160880000',
        calleeNumber: '13800138000',
        persona: 'interested',
        callId: 'out-1',
      }),
    );
    expect(outcome.callId).toBe('out-1');
    expect(memory.sms).toEqual([
      {
        projectId: 'p1',
        callId: 'out-1',
        to: '13800138000',
        template: 'assistant_send_sms',
        variables: { content: '门店地址：朝阳区建国路 88 号', assistantName: '回访助手' },
      },
    ]);
    const order = memory.writes.filter((w) => ['analysis', 'sms', 'recording'].includes(w));
    expect(order).toEqual(['analysis', 'sms', 'recording']);
  });

  it('a call cut off by the process stopping ends as 系统中断', async () => {
    const { callPorts, memory } = ports();
    const { deps, clock } = depsWith(callPorts, 5);
    const stop = new AbortController();
    const call = placeCall(deps, {
      projectId: 'p1',
      assistantId: 'a1',
      callerNumber: '02160880000',
      calleeNumber: '13800138000',
      persona: 'silent',
      callId: 'out-2',
      signal: stop.signal,
      shutdown: stop.signal,
    });
    await clock.advance(40_000);
    stop.abort(new Error('server stopping'));
    await clock.run(call);
    expect(memory.calls.get('out-2')?.endReason).toBe('interrupted');
  });
});

describe('an LLM provider that fails mid-call', () => {
  let server: OpenAICompatibleServer;
  beforeAll(async () => {
    server = await startOpenAICompatibleServer();
  });
  afterAll(() => server.close());

  it('answers 500 or hangs: the fallback line is said, the turn records why, the call goes on', async () => {
    const analysis = { content: '{"grade":"C","reason":"一般","summary":"回访","fields":{}}' };
    const answer = { content: '好的，我们的套餐每月一百元。' };
    // Turn 1: 500 twice (the client retries a 5xx once). Turn 2: no answer within the budget.
    server.enqueue({ status: 500 }, { status: 500 }, { delayMs: 20_000, content: '太迟了' });
    server.replyWith((request) => (request.body.tools ? answer : analysis));
    const cfg = config();
    const { callPorts, memory } = ports({
      providerUrl: server.baseUrl,
      cfg: { ...cfg, brain: { ...cfg.brain, providerId: 'provider-1' } },
    });
    const { deps, clock } = depsWith(callPorts, 3);
    // Above the client's one retry of a 5xx (about half a second later), far below the hang.
    deps.brainSilenceBudgetMs = 2500;
    const outcome = await clock.run(
      placeCall(deps, {
        projectId: 'p1',
        assistantId: 'a1',
        callerNumber: '02160880000',
        calleeNumber: '13800138000',
        persona: 'interested',
        callId: 'llm-fails',
      }),
    );
    expect(outcome.endReason).not.toBe('failed');
    expect(memory.calls.get('llm-fails')).toMatchObject({ status: 'ended' });
    const replies = (memory.turns.get('llm-fails') ?? []).filter((t) => t.latency !== null);
    const fallbackLine = cfg.conversation.fallbackReply;
    expect(replies[0]).toMatchObject({
      speaker: 'assistant',
      text: fallbackLine,
      latency: { fallbacks: ['brain'], brainError: '模型服务暂时不可用（HTTP 500），请稍后再试' },
    });
    expect(replies[1]).toMatchObject({
      text: fallbackLine,
      latency: { fallbacks: ['brain'], brainError: '模型服务 2.5 秒内未开始回答' },
    });
    // The model's late words are never said; the next turn is the model's again.
    expect(replies.map((t) => t.text)).not.toContain('太迟了');
    expect(replies[2]).toMatchObject({ text: answer.content });
    expect(replies[2]?.latency?.fallbacks).toBeUndefined();
  });
});
