import type { SimPersona } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../clock';
import type { CallLeg, InboundOffer, OriginateResult, Utterance } from '../types';
import { speechDurationMs } from './personas';
import { createSimCarrier, type SimLeg } from './sim-carrier';

const START = Date.parse('2025-03-01T10:00:00+08:00');

function setup(
  options: { seed?: number | string; questions?: string[]; transferFails?: () => boolean } = {},
) {
  const clock = new VirtualClock({ startAt: START });
  const carrier = createSimCarrier({ clock, seed: options.seed ?? 42, ...options });
  return { clock, carrier };
}

const dial = (setupResult: ReturnType<typeof setup>, persona: SimPersona | undefined, callId = 'call-1') =>
  setupResult.clock.run(
    setupResult.carrier.originate({ callId, from: '02160880000', to: '13800138000', persona }),
  );

/** A fixed little conversation: what the callee says back to each line. */
async function converse(clock: VirtualClock, leg: CallLeg, lines: string[], interruptible = false) {
  const heard: (Utterance | null)[] = [];
  await clock.run(async () => {
    for (const text of lines) {
      await leg.say(text, { interruptible });
      if (leg.ended) break;
      heard.push(await leg.listen({ timeoutMs: 6_000 }));
      if (leg.ended) break;
    }
  });
  return heard;
}

const answeredLeg = (result: OriginateResult): SimLeg => {
  if (!result.answered) throw new Error(`not answered: ${result.outcome}`);
  return result.leg as SimLeg;
};

const OPENING =
  '您好，我是星河宽带的客服小安，我们最近推出了千兆宽带优惠套餐，想跟您简单介绍一下，请问现在方便吗？';

describe('simulated carrier outcomes', () => {
  it.each([
    ['busy', 1_000, 3_000],
    ['powered_off', 1_500, 5_000],
    ['vacant', 1_000, 4_000],
    ['rejected', 6_000, 15_000],
  ] as const)('%s fails after a realistic ring time', async (persona, min, max) => {
    const env = setup();
    const result = await dial(env, persona);
    expect(result).toMatchObject({ answered: false, outcome: persona });
    expect(result.ringMs).toBeGreaterThanOrEqual(min);
    expect(result.ringMs).toBeLessThanOrEqual(max);
    expect(env.clock.now() - START).toBe(result.ringMs);
  });

  it('no_answer rings until the ring timeout (45 s by default, or the request’s)', async () => {
    const env = setup();
    expect(await dial(env, 'no_answer')).toMatchObject({
      answered: false,
      outcome: 'no_answer',
      ringMs: 45_000,
    });
    const short = await env.clock.run(
      env.carrier.originate({
        callId: 'c2',
        from: 'a',
        to: 'b',
        persona: 'no_answer',
        ringTimeoutMs: 20_000,
      }),
    );
    expect(short).toMatchObject({ outcome: 'no_answer', ringMs: 20_000 });
  });

  it('voicemail answers as a voicemail box that never speaks', async () => {
    const env = setup();
    const leg = answeredLeg(await dial(env, 'voicemail'));
    expect(leg.isVoicemail).toBe(true);
    expect(await converse(env.clock, leg, ['您好，请回电。'])).toEqual([null]);
  });

  it('talking personas answer after 3–15 s of ringing', async () => {
    for (const persona of [
      'interested',
      'hesitant',
      'refuses',
      'asks_question',
      'asks_human',
      'silent',
      'hangs_up',
    ] as const) {
      const env = setup();
      const result = await dial(env, persona);
      expect(result.answered, persona).toBe(true);
      expect(result.ringMs).toBeGreaterThanOrEqual(3_000);
      expect(result.ringMs).toBeLessThanOrEqual(15_000);
      expect(answeredLeg(result).answeredAt).toBe(START + result.ringMs);
    }
  });

  it('a ring longer than the timeout is no_answer; an aborted dial fails', async () => {
    const env = setup();
    const tooShort = await env.clock.run(
      env.carrier.originate({ callId: 'c', from: 'a', to: 'b', persona: 'voicemail', ringTimeoutMs: 5_000 }),
    );
    expect(tooShort).toMatchObject({ answered: false, outcome: 'no_answer', ringMs: 5_000 });
    const controller = new AbortController();
    const dialling = env.clock.run(
      env.carrier.originate({
        callId: 'd',
        from: 'a',
        to: 'b',
        persona: 'interested',
        signal: controller.signal,
      }),
    );
    controller.abort();
    expect(await dialling).toMatchObject({ answered: false, outcome: 'failed' });
  });
});

describe('simulated callees', () => {
  it('interested: positive, asks to sign up, agrees, says goodbye; speech takes realistic time', async () => {
    const env = setup();
    const leg = answeredLeg(await dial(env, 'interested'));
    const heard = await converse(env.clock, leg, [
      '请问现在方便吗？',
      '我们有千兆宽带套餐。',
      '现在办理有优惠。',
      '好的，我帮您登记。',
      '还有其他问题吗？',
    ]);
    const texts = heard.map((u) => u?.text);
    expect(texts[1]).toMatch(/不错|感兴趣|有兴趣/);
    expect(texts[2]).toMatch(/报名|预约/);
    expect(texts[4]).toContain('再见');
    for (const u of heard) {
      if (!u) continue;
      const chars = u.text.replace(/[\p{P}\s]/gu, '').length;
      const seconds = (u.endedAt - u.startedAt) / 1000;
      expect(chars / seconds).toBeGreaterThan(3);
      expect(chars / seconds).toBeLessThan(6);
      expect(u.recognitionMs).toBeGreaterThanOrEqual(150);
      expect(u.recognitionMs).toBeLessThanOrEqual(600);
    }
  });

  it('hesitant asks the price, wants to think it over and ends undecided', async () => {
    const env = setup();
    const leg = answeredLeg(await dial(env, 'hesitant'));
    const heard = await converse(env.clock, leg, [
      '方便吗？',
      '我们有新套餐。',
      '价格很实惠。',
      '您看怎么样？',
    ]);
    const all = heard.map((u) => u?.text).join('|');
    expect(all).toMatch(/多少钱|优惠|价格/);
    expect(all).toMatch(/考虑|商量|再说|再看看/);
    expect(all).not.toMatch(/报名|预约/);
  });

  it('refuses with an opt-out phrase the script brain recognises, then hangs up', async () => {
    const { findOptOut } = await import('../../brain/intent');
    const env = setup();
    const leg = answeredLeg(await dial(env, 'refuses'));
    const heard = await converse(env.clock, leg, [
      '方便吗？',
      '我们有新套餐。',
      '再给您介绍一下我们的优惠。',
    ]);
    expect(findOptOut(heard[0]?.text ?? '')).not.toBeNull();
    expect(findOptOut(heard[1]?.text ?? '')).not.toBeNull();
    expect(leg.ended?.by).toBe('remote');
  });

  it('asks_question asks the questions it was given', async () => {
    const questions = ['宽带安装要多久？', '可以先试用吗？', '月租多少钱？'];
    const env = setup({ questions });
    const leg = answeredLeg(await dial(env, 'asks_question'));
    const heard = await converse(env.clock, leg, ['方便吗？', '好的。', '好的。', '好的。']);
    const asked = heard.filter((u) => questions.some((q) => u?.text.includes(q)));
    expect(asked.length).toBeGreaterThanOrEqual(2);
  });

  it('asks_human asks for a human and goes quiet while being transferred', async () => {
    const env = setup();
    const leg = answeredLeg(await dial(env, 'asks_human'));
    const heard = await converse(env.clock, leg, ['方便吗？', '好的，正在为您转接人工客服，请稍候。']);
    expect(heard[0]?.text).toMatch(/人工/);
    expect(heard[1]).toBeNull();
    const transfer = await env.clock.run(leg.transfer('400-800-8000'));
    expect(transfer.ok).toBe(true);
    expect(leg.transferredTo).toBe('400-800-8000');
  });

  it('a transfer can fail (nobody at the human desk)', async () => {
    const env = setup({ transferFails: () => true });
    const leg = answeredLeg(await dial(env, 'asks_human'));
    expect(await env.clock.run(leg.transfer('400'))).toMatchObject({ ok: false });
  });

  it('silent never speaks: listen() times out after the silence timeout', async () => {
    const env = setup();
    const leg = answeredLeg(await dial(env, 'silent'));
    const before = env.clock.now();
    const heard = await converse(env.clock, leg, ['方便吗？', '您还在吗？']);
    expect(heard).toEqual([null, null]);
    expect(env.clock.now() - before).toBeGreaterThanOrEqual(12_000);
    expect(leg.ended).toBeNull();
  });

  it('hangs_up hangs up after one or two turns', async () => {
    let duringLine = 0;
    for (let seed = 0; seed < 12; seed++) {
      const env = setup({ seed });
      const leg = answeredLeg(await dial(env, 'hangs_up'));
      const said: number[] = [];
      const line = '我们最近有一个非常优惠的宽带套餐活动，想跟您介绍一下具体内容。';
      await env.clock.run(async () => {
        for (let i = 0; i < 5; i++) {
          const played = await leg.say(line, { interruptible: false });
          said.push(played.endedAt);
          if (leg.ended !== null) {
            if (played.playedMs < speechDurationMs(line, 4.5)) duringLine++;
            break;
          }
          await leg.listen({ timeoutMs: 6_000 });
          if (leg.ended !== null) break;
        }
      });
      expect(leg.ended?.by, `seed ${seed}`).toBe('remote');
      expect(said.length).toBeLessThanOrEqual(3);
      expect(said.length).toBeGreaterThanOrEqual(2);
    }
    // Some of them cut the assistant off mid-sentence.
    expect(duringLine).toBeGreaterThan(0);
  });

  it('presses the key a line asks for (DTMF)', async () => {
    const env = setup();
    const leg = answeredLeg(await dial(env, 'interested'));
    const [reply] = await converse(env.clock, leg, ['如需办理请按1，不需要请按2。']);
    expect(reply).toMatchObject({ text: '', dtmf: '1' });
    const human = answeredLeg(await dial(env, 'asks_human', 'call-2'));
    const [pressed] = await converse(env.clock, human, ['咨询业务请按1，转人工服务请按0。']);
    expect(pressed?.dtmf).toBe('0');
  });

  it('barge-in: a long interruptible line ends early and the next listen returns the interruption', async () => {
    let seen = 0;
    for (let seed = 0; seed < 20 && seen === 0; seed++) {
      const env = setup({ seed });
      const leg = answeredLeg(await dial(env, 'refuses'));
      await env.clock.run(async () => {
        const played = await leg.say(OPENING, { interruptible: true });
        if (!played.interrupted) return;
        seen++;
        const utterance = await leg.listen({ timeoutMs: 6_000 });
        expect(utterance?.startedAt).toBeLessThan(played.endedAt);
        expect(utterance?.startedAt).toBeGreaterThan(played.startedAt);
        expect(utterance?.text).toMatch(/不需要/);
      });
    }
    expect(seen).toBe(1);
  });

  it('without interruptible the same callee waits for the line to end', async () => {
    for (let seed = 0; seed < 10; seed++) {
      const env = setup({ seed });
      const leg = answeredLeg(await dial(env, 'refuses'));
      await env.clock.run(async () => {
        const played = await leg.say(OPENING, { interruptible: false });
        expect(played.interrupted).toBe(false);
        const utterance = await leg.listen({ timeoutMs: 6_000 });
        expect(utterance!.startedAt).toBeGreaterThanOrEqual(played.endedAt);
      });
    }
  });
});

describe('determinism and the persona mix', () => {
  async function transcript(seed: number, callId: string) {
    const env = setup({ seed });
    const result = await dial(env, undefined, callId);
    if (!result.answered) return `${result.outcome}:${result.ringMs}`;
    const heard = await converse(env.clock, result.leg, ['方便吗？', '我们有新套餐。', '价格很实惠。']);
    return `${(result.leg as SimLeg).persona}:${result.ringMs}:${heard.map((u) => `${u?.text}@${u?.startedAt}`).join('|')}`;
  }

  it('the same seed and call id give the same outcome and words; another seed differs', async () => {
    const ids = Array.from({ length: 20 }, (_, i) => `call-${i}`);
    const a = await Promise.all(ids.map((id) => transcript(7, id)));
    const b = await Promise.all([...ids].reverse().map((id) => transcript(7, id)));
    expect(b.reverse()).toEqual(a);
    const c = await Promise.all(ids.map((id) => transcript(8, id)));
    expect(c).not.toEqual(a);
  });

  it('with no persona, a realistic mix: about a third unanswered, the rest talking', async () => {
    const env = setup({ seed: 'mix' });
    const results = await env.clock.run(
      Promise.all(
        Array.from({ length: 400 }, (_, i) =>
          env.carrier.originate({ callId: `m${i}`, from: 'a', to: `1380000${i}` }),
        ),
      ),
    );
    const unanswered =
      results.filter((r) => !r.answered || (r.leg as SimLeg).isVoicemail).length / results.length;
    expect(unanswered).toBeGreaterThan(0.25);
    expect(unanswered).toBeLessThan(0.45);
    const personas = new Set(
      results.flatMap((r) => (r.answered ? [(r.leg as SimLeg).persona] : [r.outcome])),
    );
    expect(personas.size).toBeGreaterThanOrEqual(12);
  });

  it('personaFor picks the callee of a number; inbound calls reach the registered handler', async () => {
    const clock = new VirtualClock();
    const carrier = createSimCarrier({
      clock,
      seed: 1,
      personaFor: (to) => (to.endsWith('0') ? 'busy' : 'interested'),
    });
    expect(await clock.run(carrier.originate({ callId: 'x', from: 'a', to: '13800000000' }))).toMatchObject({
      outcome: 'busy',
    });
    const offers: InboundOffer[] = [];
    const off = carrier.onInbound((offer) => {
      offers.push(offer);
      void offer.answer();
    });
    const answered = await carrier.simulateInbound({
      callId: 'in-1',
      from: '13900000001',
      to: '4008000000',
      persona: 'hesitant',
    });
    expect(offers.map((o) => [o.callId, o.from, o.to, o.persona])).toEqual([
      ['in-1', '13900000001', '4008000000', 'hesitant'],
    ]);
    if (!answered.answered) throw new Error('not answered');
    const leg = answered.leg;
    expect(leg).toMatchObject({ direction: 'inbound', persona: 'hesitant', answeredAt: clock.now() });
    off();
    // Nobody takes calls: the caller hears the number is unavailable.
    expect(await carrier.simulateInbound({ callId: 'in-2', from: '1', to: '2' })).toEqual({
      answered: false,
      cause: 'unavailable',
    });
    carrier.onInbound((offer) => void offer.reject('busy'));
    expect(await carrier.simulateInbound({ callId: 'in-3', from: '1', to: '2' })).toEqual({
      answered: false,
      cause: 'busy',
    });
    expect(offers).toHaveLength(1);
    await carrier.close();
    expect(leg.ended?.by).toBe('remote');
  });
});

describe('a scripted caller (模拟来电 of a flow)', () => {
  /** A caller dialling in with `script`; the runtime's handler answers at once. */
  async function callIn(script: string[], persona: SimPersona = 'interested', transferFails?: () => boolean) {
    const clock = new VirtualClock({ startAt: START });
    const carrier = createSimCarrier({
      clock,
      seed: 3,
      ...(transferFails ? { transferFails } : {}),
    });
    carrier.onInbound((offer) => void offer.answer());
    const result = await carrier.simulateInbound({
      callId: 'in-1',
      from: '13900000001',
      to: '4008000000',
      persona,
      script,
    });
    if (!result.answered) throw new Error('not answered');
    return { clock, leg: result.leg };
  }

  it('takes one step of the script per listen: keys, words, silence, then hangs up', async () => {
    const { clock, leg } = await callIn(['1', '我想报修宽带', '', '123#', '挂机']);
    const heard = await clock.run(async () => {
      const steps: { heard: Utterance | null; waitedMs: number }[] = [];
      for (const [prompt, maxDigits] of [
        ['查询账单请按1，报修请按2。', 1],
        ['请说出您要办理的业务。', undefined],
        ['请输入您的工号。', 8],
        ['请输入您的工号。', 8],
        ['请稍候。', undefined],
      ] as const) {
        await leg.say(prompt, { interruptible: true });
        const before = clock.now();
        const utterance = await leg.listen({ timeoutMs: 5_000, maxDigits });
        steps.push({ heard: utterance, waitedMs: clock.now() - before });
      }
      return steps;
    });
    expect(heard.map((step) => [step.heard?.dtmf ?? null, step.heard?.text ?? null])).toEqual([
      ['1', ''],
      [null, '我想报修宽带'],
      [null, null],
      ['123#', ''],
      [null, null],
    ]);
    // Silence is the whole timeout; the others answer within the scripted pause.
    expect(heard[2]?.waitedMs).toBe(5_000);
    expect(heard[0]?.waitedMs).toBeLessThan(3_000);
    // 挂机: the caller hung up before the timeout ran out.
    expect(leg.ended?.by).toBe('remote');
    expect(heard[4]?.waitedMs).toBeLessThan(5_000);
  });

  it('a key answer ends at maxDigits keys: the next listen hears the keys typed ahead', async () => {
    const { clock, leg } = await callIn(['21', '3']);
    const keys = await clock.run(async () => {
      await leg.say('报修请按2。', { interruptible: true });
      const first = await leg.listen({ timeoutMs: 5_000, maxDigits: 1 });
      const second = await leg.listen({ timeoutMs: 5_000, maxDigits: 1 });
      const third = await leg.listen({ timeoutMs: 5_000, maxDigits: 1 });
      return [first, second, third];
    });
    expect(keys.map((u) => u?.dtmf)).toEqual(['2', '1', '3']);
    expect(keys[1]?.startedAt).toBe(keys[0]?.endedAt);
    await leg.hangup();
  });

  it('follows the script whatever its persona would do, and the persona takes over after it', async () => {
    // A hangs_up caller would be gone after a line or two; scripted, it stays for the whole script.
    const { clock, leg } = await callIn(['1', '2', '0'], 'hangs_up');
    const pressed = await clock.run(async () => {
      const keys: (string | null)[] = [];
      for (let i = 0; i < 3; i++) {
        await leg.say('您好，欢迎致电星河宽带，请按键选择您要办理的业务，谢谢。', { interruptible: false });
        keys.push((await leg.listen({ timeoutMs: 5_000, maxDigits: 1 }))?.dtmf ?? null);
      }
      return keys;
    });
    expect(pressed).toEqual(['1', '2', '0']);
    expect(leg.ended).toBeNull();

    const after = await callIn(['1'], 'interested');
    const replies = await after.clock.run(async () => {
      await after.leg.say('查询请按1。', { interruptible: false });
      const scripted = await after.leg.listen({ timeoutMs: 5_000, maxDigits: 1 });
      await after.leg.say('好的，请问现在方便吗？', { interruptible: false });
      const own = await after.leg.listen({ timeoutMs: 6_000 });
      return [scripted, own];
    });
    expect(replies[0]?.dtmf).toBe('1');
    expect(replies[1]?.text).toMatch(/方便|您说|什么事/);
    await after.leg.hangup();
  });

  it('a transfer fails the way the desk answers: busy, no answer after the ring timeout, or failed', async () => {
    const outcomes = new Map<string, boolean | 'busy' | 'no_answer' | 'failed'>([
      ['8001', 'busy'],
      ['8002', 'no_answer'],
      ['8003', 'failed'],
      ['8004', true],
      ['8005', false],
    ]);
    const clock = new VirtualClock({ startAt: START });
    const carrier = createSimCarrier({ clock, seed: 3, transferFails: (n) => outcomes.get(n) ?? false });
    const results = await clock.run(
      Promise.all(
        [...outcomes.keys()].map(async (number, i) => {
          const leg = answeredLeg(
            await carrier.originate({ callId: `t${i}`, from: 'a', to: 'b', persona: 'interested' }),
          );
          const before = clock.now();
          const result = await leg.transfer(number, { callerId: '02160880000', ringTimeoutMs: 20_000 });
          return { result, tookMs: clock.now() - before, leg };
        }),
      ),
    );
    expect(results.map((r) => r.result)).toEqual([
      { ok: false, outcome: 'busy', detail: '人工坐席忙线' },
      { ok: false, outcome: 'no_answer', detail: '人工坐席无人接听' },
      { ok: false, outcome: 'failed', detail: '转接失败：人工坐席未接通' },
      { ok: false, outcome: 'no_answer', detail: '人工坐席无人接听' },
      { ok: true },
    ]);
    expect(results[1]?.tookMs).toBe(20_000);
    expect(results[4]?.leg).toMatchObject({ transferredTo: '8005', transferCallerId: '02160880000' });
  });
});
