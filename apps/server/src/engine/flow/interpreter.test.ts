import { callTurn, flowStep } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { MAX_NODE_EXECUTIONS } from './interpreter';
import { buildFlow, type EdgeSpec, heard, type NodeSpec, route, runScripted } from './testing/flows';
import { caller } from './testing/script-leg';

/** 开始 → 欢迎 → 主菜单 (1 账单, 2 报修, 0 人工) → a line per key → 挂机. */
function hotline(
  menu: Record<string, unknown> = {},
  extraNodes: NodeSpec[] = [],
  extraEdges: EdgeSpec[] = [],
) {
  return buildFlow(
    [
      ['start', 'start'],
      ['welcome', 'play', { text: '您好，欢迎致电星河宽带，您的来电号码是{{caller}}。' }, '欢迎语'],
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
          ...menu,
        },
        '主菜单',
      ],
      ['bill', 'play', { text: '您本月的账单已通过短信发送。' }],
      ['repair', 'play', { text: '报修请描述故障。' }],
      ['agent', 'play', { text: '正在为您转接人工。' }],
      ['bye', 'hangup', { text: '感谢来电，再见。', reason: '菜单结束' }],
      ['lost', 'hangup', { text: '没有收到有效按键，再见。', reason: '菜单失败' }],
      ...extraNodes,
    ],
    [
      ['start', 'next', 'welcome'],
      ['welcome', 'next', 'menu'],
      ['menu', 'key:1', 'bill'],
      ['menu', 'key:2', 'repair'],
      ['menu', 'key:0', 'agent'],
      ['menu', 'invalid', 'lost'],
      ['menu', 'timeout', 'lost'],
      ['bill', 'next', 'bye'],
      ['repair', 'next', 'bye'],
      ['agent', 'next', 'bye'],
      ...extraEdges,
    ],
  );
}

const MENU_PROMPT = '查询账单请按1，报修请按2，人工服务请按0。';

describe('runFlow: a call through a menu', () => {
  it('greets, takes a key, follows its branch and hangs up with the end reason', async () => {
    const { result, leg, steps, turns, waits } = await runScripted({
      flow: hotline(),
      script: [caller.press('1')],
    });
    expect(result).toMatchObject({
      endReason: 'completed',
      hangupBy: 'assistant',
      endLabel: '菜单结束',
      error: null,
    });
    expect(route(result)).toEqual(['start:next', 'welcome:next', 'menu:key:1', 'bill:next', 'bye:-']);
    expect(heard(result)).toEqual([
      '您好，欢迎致电星河宽带，您的来电号码是13800138000。',
      MENU_PROMPT,
      '您本月的账单已通过短信发送。',
      '感谢来电，再见。',
    ]);
    const menu = result.path[2];
    expect(menu).toMatchObject({
      nodeName: '主菜单',
      nodeType: 'menu',
      input: '1',
      output: { digits: '1' },
      detail: '按键 1 账单',
      flowId: null,
    });
    // The menu waited for one key (the longest option) for its 5 s.
    expect(leg.listens).toEqual([{ timeoutMs: 5000, maxDigits: 1, at: expect.any(Number) }]);
    expect(waits).toEqual([{ nodeId: 'menu', kind: 'digits', timeoutSec: 5 }]);
    // The hangup node is the last step; the line was hung up by the flow.
    expect(result.path.at(-1)).toMatchObject({ nodeType: 'hangup', exit: null, detail: '菜单结束' });
    expect(leg.ended?.by).toBe('local');
    expect(result.endedAt).toBe(leg.ended?.at);
    // Steps and turns are reported as they happen, in order, and are well-formed for the record.
    expect(steps.map((s) => s.step)).toEqual(result.path);
    expect(turns).toEqual(result.turns);
    expect(() => flowStep.array().parse(result.path)).not.toThrow();
    expect(() => callTurn.array().parse(result.turns)).not.toThrow();
    expect(result.turns.map((t) => t.index)).toEqual(result.turns.map((_, i) => i));
    const ats = result.path.map((s) => s.atMs);
    expect([...ats].sort((a, b) => a - b)).toEqual(ats);
    expect(menu?.atMs).toBeGreaterThan(0);
    expect(menu?.durationMs).toBeGreaterThan(0);
    expect(result.turns.find((t) => t.speaker === 'callee')).toMatchObject({ dtmf: '1', text: '' });
    // One CPU measurement per node executed.
    expect(result.overheadMs).toHaveLength(result.path.length);
    expect(steps[2]?.variables.digits).toBe('1');
  });

  it('times out, says the timeout prompt, retries up to maxRetries and leaves by the timeout exit', async () => {
    const { result, leg } = await runScripted({
      flow: hotline({ maxRetries: 2, timeoutSec: 4 }),
      script: [caller.silence(), caller.silence(), caller.silence()],
    });
    expect(route(result)).toEqual(['start:next', 'welcome:next', 'menu:timeout', 'lost:-']);
    expect(heard(result).slice(1, -1)).toEqual([
      MENU_PROMPT,
      '抱歉，没有收到您的按键。',
      MENU_PROMPT,
      '抱歉，没有收到您的按键。',
      MENU_PROMPT,
    ]);
    expect(result.path[2]).toMatchObject({ detail: '超时，重试 2 次', input: null });
    expect(leg.listens.map((l) => l.timeoutMs)).toEqual([4000, 4000, 4000]);
    expect(result.endLabel).toBe('菜单失败');
  });

  it('a wrong key gets the invalid prompt and another try; the right key then wins', async () => {
    const { result } = await runScripted({
      flow: hotline(),
      script: [caller.press('9'), caller.press('2')],
    });
    expect(route(result)).toContain('menu:key:2');
    expect(heard(result).slice(1, 4)).toEqual([MENU_PROMPT, '您的按键有误，请重新选择。', MENU_PROMPT]);
    expect(result.path[2]).toMatchObject({ input: '9 / 2', detail: '按键 2 报修，重试 1 次' });
  });

  it('the last failure decides between the invalid and the timeout exits', async () => {
    const byTimeout = await runScripted({
      flow: hotline({ maxRetries: 1 }),
      script: [caller.press('9'), caller.silence()],
    });
    expect(byTimeout.result.path[2]).toMatchObject({ exit: 'timeout', detail: '超时，重试 1 次' });
    const byInvalid = await runScripted({
      flow: hotline({ maxRetries: 1 }),
      script: [caller.silence(), caller.press('7')],
    });
    expect(byInvalid.result.path[2]).toMatchObject({ exit: 'invalid', detail: '输入错误（7），重试 1 次' });
    const noRetries = await runScripted({ flow: hotline({ maxRetries: 0 }), script: [caller.press('5')] });
    expect(noRetries.result.path[2]).toMatchObject({ exit: 'invalid', detail: '输入错误（5）' });
    expect(heard(noRetries.result)).not.toContain('您的按键有误，请重新选择。');
  });

  it('the repeat key replays the menu without using up a retry', async () => {
    const { result } = await runScripted({
      flow: hotline({ maxRetries: 0 }),
      script: [caller.press('*'), caller.press('*'), caller.press('0')],
    });
    expect(route(result)).toContain('menu:key:0');
    expect(heard(result).filter((line) => line === MENU_PROMPT)).toHaveLength(3);
    expect(result.path[2]?.detail).toBe('按键 0 人工，重听 2 次');
  });

  it('multi-digit keys: # finishes a shorter key, the longest key completes on its own', async () => {
    const flow = hotline({
      options: [
        { key: '1', label: '' },
        { key: '12', label: '' },
        { key: '100', label: '' },
      ],
    });
    const edges: EdgeSpec[] = [
      ['menu', 'key:12', 'repair'],
      ['menu', 'key:100', 'agent'],
    ];
    const withHash = await runScripted({
      flow: { ...flow, graph: { ...flow.graph, edges: [...flow.graph.edges, ...edgesOf(edges)] } },
      script: [caller.press('12#')],
    });
    expect(withHash.leg.listens[0]?.maxDigits).toBe(3);
    expect(withHash.result.path[2]).toMatchObject({ exit: 'key:12', input: '12#', output: { digits: '12' } });
    const full = await runScripted({
      flow: { ...flow, graph: { ...flow.graph, edges: [...flow.graph.edges, ...edgesOf(edges)] } },
      script: [caller.press('1000')],
    });
    // The line hands over three keys; the fourth is not part of this answer.
    expect(full.result.path[2]).toMatchObject({ exit: 'key:100', input: '100' });
  });

  it('a key pressed during an interruptible prompt cuts it and is taken at once', async () => {
    const { result, leg } = await runScripted({
      flow: hotline(),
      script: [caller.bargeIn('2', 600, '报修')],
    });
    expect(route(result)).toContain('menu:key:2');
    const prompt = result.turns.find((t) => t.text === MENU_PROMPT);
    expect(prompt?.interrupted).toBe(true);
    const key = result.turns.find((t) => t.speaker === 'callee');
    expect(key?.dtmf).toBe('2');
    expect(key?.startMs).toBe((prompt?.startMs ?? 0) + 600);
    expect(leg.spoken.find((l) => l.text === MENU_PROMPT)?.interrupted).toBe(true);
  });

  it('a non-interruptible menu plays to the end; the key pressed meanwhile still counts', async () => {
    const { result } = await runScripted({
      flow: hotline({ interruptible: false }),
      script: [caller.bargeIn('1', 600, '报修')],
    });
    expect(result.turns.find((t) => t.text === MENU_PROMPT)?.interrupted).toBe(false);
    expect(route(result)).toContain('menu:key:1');
  });

  it('a spoken digit chooses like a key; other words count as invalid input', async () => {
    const spoken = await runScripted({ flow: hotline(), script: [caller.say('二')] });
    expect(spoken.result.path[2]).toMatchObject({ exit: 'key:2', input: '2' });
    const words = await runScripted({
      flow: hotline({ maxRetries: 0 }),
      script: [caller.say('我想查一下账单')],
    });
    expect(words.result.path[2]).toMatchObject({ exit: 'invalid', input: '我想查一下账单' });
  });

  it('the caller hanging up mid-menu ends the call there: callee_hangup, the menu step without an exit', async () => {
    const { result, leg } = await runScripted({ flow: hotline(), script: [caller.hangUp(1500)] });
    expect(result).toMatchObject({ endReason: 'callee_hangup', hangupBy: 'callee', error: null });
    expect(route(result)).toEqual(['start:next', 'welcome:next', 'menu:-']);
    expect(result.path[2]?.detail).toContain('来电者挂机');
    expect(leg.ended?.by).toBe('remote');
    expect(result.endedAt).toBe(leg.ended?.at);
  });

  it('hanging up during a prompt ends the call in that node', async () => {
    const { result } = await runScripted({ flow: hotline(), script: [caller.hangUpDuringPrompt(300)] });
    expect(result.endReason).toBe('callee_hangup');
    expect(route(result)).toEqual(['start:next', 'welcome:-']);
    expect(result.turns[0]).toMatchObject({ endMs: 300 });
  });
});

const edgesOf = (specs: EdgeSpec[]) =>
  specs.map(([source, sourceHandle, target], i) => ({ id: `x${i}`, source, sourceHandle, target }));

describe('runFlow: collecting digits', () => {
  const collectFlow = (data: Record<string, unknown>) =>
    buildFlow(
      [
        ['start', 'start'],
        ['phone', 'collect', { prompt: '请输入您的手机号码，以井号键结束。', variable: 'phone', ...data }],
        ['ok', 'play', { text: '您输入的是{{phone}}。' }],
        ['bad', 'hangup', { reason: '号码错误' }],
        ['quiet', 'hangup', { reason: '未输入' }],
      ],
      [
        ['start', 'next', 'phone'],
        ['phone', 'next', 'ok'],
        ['phone', 'invalid', 'bad'],
        ['phone', 'timeout', 'quiet'],
      ],
    );
  const PHONE = { minDigits: 11, maxDigits: 11, pattern: '^1[3-9]\\d{9}$' };

  it('validates length and pattern, retries with the invalid prompt, stores the digits', async () => {
    const { result, leg } = await runScripted({
      flow: collectFlow(PHONE),
      script: [caller.press('1380013800#'), caller.press('23912345678'), caller.press('13912345678')],
    });
    expect(route(result)).toEqual(['start:next', 'phone:next', 'ok:next']);
    expect(result.path[1]).toMatchObject({
      input: '1380013800# / 23912345678 / 13912345678',
      output: { phone: '13912345678', digits: '13912345678' },
      detail: '收号 13912345678，重试 2 次',
    });
    expect(heard(result).filter((l) => l === '您的输入有误，请重新输入。')).toHaveLength(2);
    expect(heard(result).at(-1)).toBe('您输入的是13912345678。');
    expect(result.variables.phone).toBe('13912345678');
    expect(leg.listens[0]).toMatchObject({ timeoutMs: 8000, maxDigits: 11 });
  });

  it('# ends a shorter entry; without finishOnHash a # is not a digit', async () => {
    const hash = await runScripted({
      flow: collectFlow({ minDigits: 4, maxDigits: 8 }),
      script: [caller.press('1234#')],
    });
    expect(hash.result.variables.phone).toBe('1234');
    const strict = await runScripted({
      flow: collectFlow({ minDigits: 4, maxDigits: 8, finishOnHash: false, maxRetries: 0 }),
      script: [caller.press('1234#')],
    });
    expect(strict.result.path[1]).toMatchObject({ exit: 'invalid' });
  });

  it('gives up by the invalid exit after the retries, and by the timeout exit on silence', async () => {
    const invalid = await runScripted({
      flow: collectFlow({ ...PHONE, maxRetries: 1 }),
      script: [caller.press('123#'), caller.press('23912345678')],
    });
    expect(invalid.result.path[1]).toMatchObject({ exit: 'invalid', detail: '不符合校验规则，重试 1 次' });
    expect(invalid.result.endLabel).toBe('号码错误');
    const quiet = await runScripted({
      flow: collectFlow({ ...PHONE, maxRetries: 1 }),
      script: [caller.silence(), caller.silence()],
    });
    expect(quiet.result.path[1]).toMatchObject({ exit: 'timeout', detail: '超时，重试 1 次' });
    expect(quiet.result.endLabel).toBe('未输入');
  });
});

describe('runFlow: speech intents', () => {
  const speechFlow = (data: Record<string, unknown> = {}) =>
    buildFlow(
      [
        ['start', 'start'],
        [
          'ask',
          'speech',
          {
            prompt: '请问您需要办理什么业务？',
            variable: 'need',
            intents: [
              { id: 'repair', name: '报修', keywords: ['坏了', '报修', '没有网'] },
              { id: 'bill', name: '账单', keywords: ['账单', '话费', 'VIP'] },
            ],
            ...data,
          },
        ],
        ['repair', 'play', { text: '好的，为您登记报修：{{need}}' }],
        ['bill', 'play', { text: '好的，为您查询账单。' }],
        ['other', 'hangup', { reason: '未识别' }],
        ['quiet', 'hangup', { reason: '无应答' }],
      ],
      [
        ['start', 'next', 'ask'],
        ['ask', 'intent:repair', 'repair'],
        ['ask', 'intent:bill', 'bill'],
        ['ask', 'nomatch', 'other'],
        ['ask', 'timeout', 'quiet'],
      ],
    );

  it('matches the first intent whose keyword the caller said and keeps the words', async () => {
    const { result, waits } = await runScripted({ flow: speechFlow(), script: [caller.say('我家宽带坏了')] });
    expect(route(result)).toEqual(['start:next', 'ask:intent:repair', 'repair:next']);
    expect(result.path[1]).toMatchObject({
      input: '我家宽带坏了',
      output: { need: '我家宽带坏了', speech: '我家宽带坏了' },
      detail: '匹配意图「报修」',
    });
    expect(heard(result).at(-1)).toBe('好的，为您登记报修：我家宽带坏了');
    expect(waits[0]).toMatchObject({ kind: 'speech', timeoutSec: 6 });
  });

  it('folds full-width letters, case and spaces before matching', async () => {
    const { result } = await runScripted({
      flow: speechFlow(),
      script: [caller.say('我要开通 ｖｉｐ 服务')],
    });
    expect(result.path[1]?.exit).toBe('intent:bill');
  });

  it('no match gets the retry prompt; a match on the retry still wins', async () => {
    const { result } = await runScripted({
      flow: speechFlow(),
      script: [caller.say('你好'), caller.say('我想交话费')],
    });
    expect(result.path[1]).toMatchObject({ exit: 'intent:bill', detail: '匹配意图「账单」，重试 1 次' });
    expect(heard(result)).toContain('抱歉，我没有听清，请再说一遍。');
  });

  it('leaves by nomatch or timeout once the retries are used', async () => {
    const nomatch = await runScripted({ flow: speechFlow(), script: [caller.say('你好'), caller.say('嗯')] });
    expect(nomatch.result.path[1]).toMatchObject({ exit: 'nomatch', detail: '未匹配意图，重试 1 次' });
    expect(nomatch.result.variables.need).toBe('嗯');
    const quiet = await runScripted({ flow: speechFlow({ maxRetries: 0 }), script: [caller.silence()] });
    expect(quiet.result.path[1]).toMatchObject({ exit: 'timeout', detail: '超时' });
  });
});

describe('runFlow: variables, prompts and the end of a flow', () => {
  it('system variables: caller, callee, call id and China time', async () => {
    const flow = buildFlow(
      [
        ['start', 'start'],
        ['say', 'play', { text: '{{caller}}|{{callee}}|{{call_id}}|{{now}}|{{date}}|{{time}}|{{weekday}}' }],
      ],
      [['start', 'next', 'say']],
    );
    // 23:30 in China is 15:30 UTC: the date and weekday must not follow the server's zone.
    const { result } = await runScripted({ flow, at: '2026-11-22T23:30', caller: '02161234567' });
    expect(heard(result)[0]).toBe('02161234567|4008001234|call-flow-1|2026-11-22 23:30|2026-11-22|23:30|7');
  });

  it('set assigns rendered values that later nodes read; starting variables are there from the start', async () => {
    const flow = buildFlow(
      [
        ['start', 'start'],
        [
          'set',
          'set',
          {
            assignments: [
              { variable: 'greeting', value: '{{客户姓名}}您好' },
              { variable: 'tail', value: '{{caller}}' },
            ],
          },
        ],
        ['say', 'play', { text: '{{greeting}}，尾号{{tail}}。{{unknown}}' }],
      ],
      [
        ['start', 'next', 'set'],
        ['set', 'next', 'say'],
      ],
    );
    const { result } = await runScripted({ flow, variables: { 客户姓名: '王先生' } });
    expect(result.path[1]).toMatchObject({
      output: { greeting: '王先生您好', tail: '13800138000' },
      detail: 'greeting = 王先生您好，tail = 13800138000',
    });
    expect(heard(result)).toEqual(['王先生您好，尾号13800138000。']);
  });

  it('an uploaded prompt plays as audio; a missing file falls back to the text', async () => {
    const flow = buildFlow(
      [
        ['start', 'start'],
        ['music', 'play', { text: '欢迎致电', audioId: 'audio-1' }],
        ['gone', 'play', { text: '文字提示', audioId: 'audio-gone' }],
      ],
      [
        ['start', 'next', 'music'],
        ['music', 'next', 'gone'],
      ],
    );
    const { result, leg } = await runScripted({
      flow,
      deps: { audio: async (id) => (id === 'audio-1' ? new Int16Array(16_000) : null) },
    });
    expect(leg.audioPlayed).toEqual([16_000]);
    expect(result.path[1]).toMatchObject({ detail: '播放录音', durationMs: 2000 });
    expect(result.path[2]?.detail).toContain('录音不可用，改为朗读文字');
    expect(heard(result)).toEqual(['欢迎致电', '文字提示']);
  });

  it('an unconnected exit ends the call as completed, saying so in the step', async () => {
    const flow = buildFlow(
      [
        ['start', 'start'],
        ['say', 'play', { text: '只有一句话。' }],
      ],
      [['start', 'next', 'say']],
    );
    const { result, leg } = await runScripted({ flow });
    expect(result).toMatchObject({ endReason: 'completed', hangupBy: 'assistant', error: null });
    expect(result.path.at(-1)).toMatchObject({ nodeId: 'say', exit: 'next' });
    expect(result.path.at(-1)?.detail).toContain('流程未连接下一步');
    expect(leg.ended?.by).toBe('local');
  });

  it('a loop without a waiting node is stopped after 1,000 node executions', async () => {
    const flow = buildFlow(
      [
        ['start', 'start'],
        ['a', 'set', { assignments: [{ variable: 'x', value: '1' }] }],
        ['b', 'set', { assignments: [{ variable: 'x', value: '2' }] }],
      ],
      [
        ['start', 'next', 'a'],
        ['a', 'next', 'b'],
        ['b', 'next', 'a'],
      ],
    );
    const { result } = await runScripted({ flow });
    expect(result).toMatchObject({ endReason: 'failed', hangupBy: 'system' });
    expect(result.error).toBeInstanceOf(Error);
    expect(result.path).toHaveLength(MAX_NODE_EXECUTIONS + 1);
    expect(result.path.at(-1)).toMatchObject({ exit: null });
    expect(result.path.at(-1)?.detail).toContain('疑似死循环');
  });

  it('an abort hangs up: failed by the system, the waiting node marked', async () => {
    const controller = new AbortController();
    const { result, leg } = await runScripted({
      flow: hotline({ timeoutSec: 30 }),
      script: [caller.silence()],
      signal: controller.signal,
      onLeg: (_leg, clock) => {
        void clock.sleep(10_000).then(() => controller.abort());
      },
    });
    expect(result).toMatchObject({ endReason: 'failed', hangupBy: 'system' });
    expect(leg.ended?.by).toBe('local');
    expect(route(result).at(-1)).toBe('menu:-');
    expect(result.path.at(-1)?.detail).toContain('通话被中止');
  });

  it('a flow without a start node fails with a reason instead of throwing', async () => {
    const flow = buildFlow([['say', 'play', { text: '孤立的节点' }]], []);
    const { result, leg } = await runScripted({ flow });
    expect(result).toMatchObject({ endReason: 'failed', hangupBy: 'system' });
    expect(result.error).toBeInstanceOf(Error);
    expect(result.path).toEqual([]);
    expect(leg.ended?.by).toBe('local');
  });
});
