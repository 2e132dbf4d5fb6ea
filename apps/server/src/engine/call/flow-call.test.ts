import type { SimPersona } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { buildFlow } from '../flow/testing/flows';
import type { LoadedFlow } from '../flow/types';
import type { SimTransferFailure } from '../telephony/sim/sim-carrier';
import { answerCall } from './answer-call';
import { flowPathSummary, runFlowCall } from './flow-call';
import type { InboundRoute } from './ports';
import { depsWith, memoryPorts } from './test-support';

/*
 * Inbound calls answered by a call flow, end to end in the engine: the real interpreter over the
 * simulated carrier's leg (a scripted caller) on a virtual clock, with the ports in memory.
 */

const NUMBER = '4008001234';
const route = (flowId = 'hotline', callinLimit = 5): InboundRoute => ({
  projectId: 'p1',
  assistantId: null,
  flowId,
  callinLimit,
});

/** 星河宽带: greeting, a menu (1 账单 / 2 报修 via the assistant / 0 人工), voicemail for the rest. */
const hotline: LoadedFlow = buildFlow(
  [
    ['start', 'start'],
    ['greet', 'play', { text: '您好，欢迎致电星河宽带。' }, '欢迎语'],
    [
      'menu',
      'menu',
      {
        prompt: '查询账单请按1，报修请按2，人工服务请按0。',
        options: [
          { key: '1', label: '账单' },
          { key: '2', label: '报修' },
          { key: '0', label: '人工' },
        ],
        maxRetries: 1,
      },
      '主菜单',
    ],
    ['bill', 'play', { text: '您本月账单为 128 元。' }, '账单查询'],
    ['repair', 'assistant', { assistantId: 'a1' }, '报修助手'],
    ['agent', 'transfer', { target: '8001', ringTimeoutSec: 20 }, '转人工'],
    ['busy', 'play', { text: '坐席正忙，请留言。' }, '坐席忙'],
    ['message', 'voicemail', { maxSeconds: 30 }, '留言'],
    ['thanks', 'hangup', { text: '感谢您的来电，再见。', reason: '查询结束' }, '结束'],
    ['later', 'hangup', { text: '再见。', reason: '未选择' }, '未选择'],
  ],
  [
    ['start', 'next', 'greet'],
    ['greet', 'next', 'menu'],
    ['menu', 'key:1', 'bill'],
    ['menu', 'key:2', 'repair'],
    ['menu', 'key:0', 'agent'],
    ['menu', 'invalid', 'later'],
    ['menu', 'timeout', 'later'],
    ['bill', 'next', 'thanks'],
    ['repair', 'next', 'thanks'],
    ['repair', 'transfer', 'agent'],
    ['agent', 'busy', 'busy'],
    ['agent', 'no_answer', 'busy'],
    ['agent', 'failed', 'busy'],
    ['busy', 'next', 'message'],
    ['message', 'next', 'thanks'],
  ],
  { flowId: 'hotline', name: '星河宽带客服热线', version: 2 },
);

/** A caller dials the number with `script`; the engine answers as the runtime would. */
async function callIn(
  options: {
    script?: string[];
    persona?: SimPersona;
    callId?: string;
    transferFails?: (number: string) => SimTransferFailure;
    route?: InboundRoute;
  } = {},
) {
  const { callPorts, memory } = memoryPorts({ route: options.route ?? route(), flows: { hotline } });
  const { clock, carrier, deps } = depsWith(callPorts, 11, options.transferFails);
  const callId = options.callId ?? 'in-1';
  let handled: Promise<unknown> = Promise.resolve(null);
  const off = carrier.onInbound((offer) => {
    handled = answerCall(deps, offer);
  });
  const heard = await clock.run(
    carrier.simulateInbound({
      callId,
      from: '13900000001',
      to: NUMBER,
      persona: options.persona ?? 'interested',
      script: options.script ?? [],
    }),
  );
  off();
  const outcome = await clock.run(handled);
  return {
    heard,
    outcome,
    memory,
    call: memory.calls.get(callId),
    steps: memory.steps.get(callId) ?? [],
    turns: memory.turns.get(callId) ?? [],
    analysis: memory.analyses.get(callId),
    carrier,
  };
}

const route_ = (steps: { nodeId: string; exit: string | null }[]) =>
  steps.map((s) => `${s.nodeId}:${s.exit ?? '-'}`);

describe('a call answered by a flow', () => {
  it('runs the menu the caller keys through: the record carries the flow, its path and the transcript in order', async () => {
    const { call, steps, turns, memory, analysis, carrier } = await callIn({ script: ['1'] });
    expect(call).toMatchObject({
      direction: 'inbound',
      callerNumber: '13900000001',
      calleeNumber: NUMBER,
      flowId: 'hotline',
      flowName: '星河宽带客服热线',
      flowVersion: 2,
      assistantId: null,
      status: 'ended',
      endReason: 'completed',
    });
    expect(route_(steps)).toEqual(['start:next', 'greet:next', 'menu:key:1', 'bill:next', 'thanks:-']);
    expect(steps[2]).toMatchObject({ nodeName: '主菜单', input: '1' });
    expect(steps.at(-1)).toMatchObject({ nodeType: 'hangup', detail: '查询结束' });
    // Steps are stamped on the call's timeline, in order.
    const times = steps.map((s) => s.atMs);
    expect([...times].sort((a, b) => a - b)).toEqual(times);

    expect(turns.map((t) => t.index)).toEqual(turns.map((_, i) => i));
    expect(turns.map((t) => (t.speaker === 'callee' ? `按 ${t.dtmf}` : t.text))).toEqual([
      '您好，欢迎致电星河宽带。',
      '查询账单请按1，报修请按2，人工服务请按0。',
      '按 1',
      '您本月账单为 128 元。',
      '感谢您的来电，再见。',
    ]);
    // Each node's step is written as it finishes, its lines before it; the end and after-call last.
    expect(memory.writes).toEqual([
      'create',
      'answered',
      'step',
      'turn',
      'step',
      'turn',
      'step',
      'turn',
      'step',
      'turn',
      'step',
      'end completed',
      'analysis',
      'after call',
      'recording',
    ]);
    // No assistant talked: a summary of the path, no grade.
    expect(analysis).toMatchObject({ grade: null, by: 'rules', fields: { 客户按键: '1' } });
    expect(analysis?.summary).toBe('欢迎语 → 按键 1 → 账单查询 → 挂机（查询结束）');
    expect(carrier.activeLegs).toBe(0);
  });

  it('hands the caller to the assistant node and takes the line back: one transcript, numbered by the call', async () => {
    const { call, steps, turns, analysis } = await callIn({ script: ['2'], persona: 'interested' });
    expect(call).toMatchObject({ endReason: 'completed', status: 'ended' });
    expect(route_(steps)).toEqual(['start:next', 'greet:next', 'menu:key:2', 'repair:next', 'thanks:-']);
    expect(steps[3]?.detail).toContain('回访助手');
    expect(steps[3]?.output['assistant.outcome']).toBe('completed');
    expect(turns.map((t) => t.index)).toEqual(turns.map((_, i) => i));
    // The assistant's opening line follows the key press; the flow's goodbye comes after its talk.
    const keyAt = turns.findIndex((t) => t.dtmf === '2');
    const assistantLines = turns.slice(keyAt + 1, -1);
    expect(assistantLines.some((t) => t.speaker === 'callee' && t.text.length > 0)).toBe(true);
    expect(assistantLines[0]?.speaker).toBe('assistant');
    expect(turns.at(-1)?.text).toBe('感谢您的来电，再见。');
    // An assistant talked: graded by its config, not summarised by the path.
    expect(analysis?.grade).not.toBeNull();
    expect(analysis?.summary).not.toContain('→');
  });

  it('a caller asking the assistant for a person goes on through the flow’s transfer node', async () => {
    const { call, steps } = await callIn({ script: ['2'], persona: 'asks_human' });
    expect(route_(steps)).toEqual(['start:next', 'greet:next', 'menu:key:2', 'repair:transfer', 'agent:-']);
    expect(call).toMatchObject({ endReason: 'transferred' });
    expect(call?.end?.transfer).toMatchObject({ number: '8001' });
  });

  it('a busy desk takes the 忙线 branch; the voicemail left there is recorded with the call', async () => {
    const { call, steps, analysis, memory } = await callIn({
      script: ['0', '我家宽带断网了，麻烦尽快回电'],
      transferFails: () => 'busy',
    });
    expect(route_(steps)).toEqual([
      'start:next',
      'greet:next',
      'menu:key:0',
      'agent:busy',
      'busy:next',
      'message:next',
      'thanks:-',
    ]);
    expect(steps[3]?.output['transfer.outcome']).toBe('busy');
    expect(call?.end?.transfer).toBeNull();
    expect(Number(steps[5]?.output['voicemail.seconds'])).toBeGreaterThan(0);
    expect(steps[5]?.input).toBe('我家宽带断网了，麻烦尽快回电');
    expect(analysis?.fields).toMatchObject({ 留言: '我家宽带断网了，麻烦尽快回电' });
    expect(memory.writes.at(-1)).toBe('recording');
  });

  it('a desk that does not answer rings for the node’s ring timeout, then takes the 无人接听 branch', async () => {
    const { steps } = await callIn({ script: ['0', ''], transferFails: () => 'no_answer' });
    expect(route_(steps).slice(3, 5)).toEqual(['agent:no_answer', 'busy:next']);
    expect(steps[3]?.durationMs).toBeGreaterThanOrEqual(20_000);
  });

  it('the caller hanging up mid-menu ends the call in that node, hung up by the caller', async () => {
    const { call, steps, analysis } = await callIn({ script: ['挂机'] });
    expect(call).toMatchObject({ endReason: 'callee_hangup' });
    expect(call?.end?.hangupBy).toBe('callee');
    expect(route_(steps).at(-1)).toBe('menu:-');
    expect(analysis?.summary).toBe('欢迎语 → 主菜单 → 来电者挂机');
  });
});

describe('who answers a flow number', () => {
  it('a flow that cannot be loaded (unpublished since it was bound) answers nobody: 号码未配置呼入', async () => {
    const { heard, call, steps } = await callIn({ route: route('gone') });
    expect(heard).toEqual({ answered: false, cause: 'unavailable' });
    expect(call).toMatchObject({ status: 'ended', endReason: 'not_bound', flowId: 'gone' });
    expect(steps).toEqual([]);
  });

  it('beyond concurrentCallin the caller hears busy and the call is recorded with its flow', async () => {
    const { callPorts, memory } = memoryPorts({ route: route('hotline', 1), flows: { hotline } });
    const { clock, carrier, deps } = depsWith(callPorts);
    const handled: Promise<unknown>[] = [];
    carrier.onInbound((offer) => handled.push(answerCall(deps, offer)));
    // The first caller stays in the menu (silent) while the second one calls.
    await clock.run(
      carrier.simulateInbound({ callId: 'first', from: '1', to: NUMBER, persona: 'silent', script: [''] }),
    );
    await clock.advance(1000);
    expect(memory.calls.get('first')?.status).toBe('in_progress');
    const second = await clock.run(
      carrier.simulateInbound({ callId: 'second', from: '2', to: NUMBER, persona: 'interested' }),
    );
    expect(second).toEqual({ answered: false, cause: 'busy' });
    expect(memory.calls.get('second')).toMatchObject({
      status: 'ended',
      endReason: 'callin_limit',
      flowName: '星河宽带客服热线',
    });
    await clock.run(Promise.all(handled));
  });

  it('the editor’s 模拟来电 runs the draft: recorded without a version', async () => {
    const { callPorts, memory } = memoryPorts({ route: null, flows: { hotline } });
    const { clock, carrier, deps } = depsWith(callPorts);
    let handled: Promise<unknown> = Promise.resolve();
    carrier.onInbound((offer) => {
      handled = runFlowCall(deps, offer, {
        projectId: 'p1',
        flowId: 'hotline',
        callinLimit: 5,
        version: 'draft',
      });
    });
    await clock.run(
      carrier.simulateInbound({ callId: 'test', from: '13900000002', to: NUMBER, script: ['1'] }),
    );
    await clock.run(handled);
    expect(memory.calls.get('test')).toMatchObject({ flowVersion: null, endReason: 'completed' });
  });
});

describe('the path as a person notes it', () => {
  it('keeps what matters and elides long paths', () => {
    const step = (
      nodeType: 'play' | 'menu' | 'hangup',
      nodeName: string,
      exit: string | null,
      detail = '',
    ) => ({
      nodeId: nodeName,
      nodeType,
      nodeName,
      atMs: 0,
      durationMs: 0,
      exit,
      input: null,
      output: {},
      detail,
      flowId: null,
    });
    const long = Array.from({ length: 20 }, (_, i) => step('play', `放音${i}`, 'next'));
    const summary = flowPathSummary([...long, step('hangup', '结束', null, '非工作时间')], 'completed');
    expect(summary.split(' → ')).toHaveLength(12);
    expect(summary).toMatch(/放音0 → .* → … → 挂机（非工作时间）$/);
    expect(flowPathSummary([], 'no_answer')).toBe('来电者在接听前挂断。');
  });
});
