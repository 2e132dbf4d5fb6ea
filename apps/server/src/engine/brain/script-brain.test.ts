import { type AssistantConfig, assistantConfig, type RetrievedSegment } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { createBrain } from './create-brain';
import { detectIntent } from './intent';
import { createScriptBrain, SPOKEN_ANSWER_MAX_CHARS, TRANSFER_OFFER } from './script-brain';
import type { BrainEvent, BrainTurn } from './types';

const config = (overrides: Record<string, unknown> = {}): AssistantConfig =>
  assistantConfig.parse({
    openingLine: '您好，我是某某教育的小王。',
    conversation: { transferNumber: '400-123-4567', maxTurns: 5 },
    intentRules: {
      A: { keywords: ['试听'] },
      B: { keywords: ['课程'] },
      C: { keywords: ['再联系'] },
      D: { keywords: ['太贵了'] },
    },
    ...overrides,
  });

const segment = (over: Partial<RetrievedSegment>): RetrievedSegment => ({
  id: 'seg-1',
  knowledgeBaseId: 'kb-1',
  documentId: 'doc-1',
  documentName: '常见问题.csv',
  content: '',
  question: null,
  answer: null,
  score: 0.8,
  ...over,
});

async function run(turn: Partial<BrainTurn> & { config?: AssistantConfig }) {
  const brain = createScriptBrain();
  const events: BrainEvent[] = [];
  for await (const event of brain.turn({
    config: turn.config ?? config(),
    history: [],
    utterance: null,
    knowledge: [],
    knowledgeVerdict: null,
    turnIndex: 1,
    ...turn,
  })) {
    events.push(event);
  }
  const reply = events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join('');
  const actions = events.flatMap((e) => (e.type === 'action' ? [e.action] : []));
  const intent = events.find((e) => e.type === 'intent');
  return { events, reply, actions, intent };
}

describe('script brain (离线脚本模式)', () => {
  it('is what createBrain gives without a provider', () => {
    expect(createBrain({ config: config(), provider: null }).mode).toBe('script');
  });

  it('opt-out: polite close, do-not-call, hang up, intent D', async () => {
    const r = await run({
      utterance: '你们别再打了，烦死了',
      knowledge: [segment({ content: '不会被用到' })],
    });
    expect(r.reply).toBe('好的，很抱歉打扰您了，以后不会再给您致电，再见！');
    expect(r.actions).toEqual(['opt_out', 'end_call']);
    expect(r.intent).toMatchObject({ type: 'intent', grade: 'D' });
    // Events come in the order the test chat shows them: words, then intent, then actions.
    expect(r.events.map((e) => e.type)).toEqual(['delta', 'intent', 'action', 'action']);
  });

  it('hears "don\'t call me" with words in between as opt-out', async () => {
    for (const utterance of [
      '别再给我打电话了',
      '以后不要再给我们打了',
      '你们别跟我联系了',
      '不用再来电了',
    ]) {
      const r = await run({ utterance });
      expect(r.actions, utterance).toEqual(['opt_out', 'end_call']);
    }
    const question = await run({ utterance: '你们什么时候给我打电话？' });
    expect(question.actions).toEqual([]);
  });

  it('a soft refusal counts as opt-out, but not inside a question', async () => {
    expect((await run({ utterance: '不需要，谢谢' })).actions).toEqual(['opt_out', 'end_call']);
    const question = await run({ utterance: '试听课不需要带电脑吧？' });
    expect(question.actions).toEqual([]);
    expect(question.reply).toBe('抱歉，这个问题我需要确认一下，稍后会有专人联系您。请问还有其他问题吗？');
  });

  it('an end-call phrase closes without putting the number on the do-not-call list', async () => {
    const r = await run({ utterance: '好的我知道了，再见' });
    expect(r.reply).toBe('感谢您的接听，祝您生活愉快，再见！');
    expect(r.actions).toEqual(['end_call']);
  });

  it('transfer request: transfer line and transfer action, only when transfer is configured', async () => {
    const r = await run({ utterance: '帮我转人工' });
    expect(r.reply).toBe('好的，正在为您转接人工客服，请稍候。');
    expect(r.events.filter((e) => e.type === 'action')).toEqual([
      { type: 'action', action: 'transfer', detail: '客户要求转人工：「转人工」' },
    ]);

    const noNumber = await run({
      utterance: '帮我转人工',
      config: config({ conversation: { transferNumber: '' } }),
    });
    expect(noNumber.actions).toEqual([]);
    expect(noNumber.reply).toContain('稍后会有专人联系您');

    const never = await run({
      utterance: '帮我转人工',
      config: config({ conversation: { transferNumber: '400-123-4567', transferWhen: 'never' } }),
    });
    expect(never.actions).toEqual([]);
  });

  it('transfers on intent A when the assistant is set to', async () => {
    const cfg = config({ conversation: { transferNumber: '400-123-4567', transferWhen: 'on_intent_a' } });
    const r = await run({ config: cfg, utterance: '我想约个试听' });
    expect(r.actions).toEqual(['transfer']);
    expect(r.intent).toMatchObject({ grade: 'A' });
  });

  it('silence: the re-prompt', async () => {
    const r = await run({ utterance: null });
    expect(r.reply).toBe('您好，请问您还在听吗？');
    expect(r.actions).toEqual([]);
    expect(r.intent).toBeUndefined();
  });

  it('knowledge hit on a question-answer pair: its answer as written', async () => {
    const r = await run({
      utterance: '上课地点在哪里',
      knowledge: [
        segment({
          content: '问：上课地点在哪？\n答：我们在朝阳区建国路 88 号三层。',
          question: '上课地点在哪？',
          answer: '我们在朝阳区建国路 88 号三层。',
        }),
        segment({ id: 'seg-2', content: '第二条不会被读出' }),
      ],
    });
    expect(r.reply).toBe('我们在朝阳区建国路 88 号三层。');
    expect(r.actions).toEqual([]);
  });

  it('knowledge hit on a passage: plain spoken text, cut at a sentence end', async () => {
    const sentence = '我们的课程分为基础班、提高班和冲刺班，每个班级不超过二十人。';
    const long = `## 课程介绍\n\n**${sentence}**\n- ${sentence.repeat(5)}`;
    const r = await run({ utterance: '介绍一下你们的课', knowledge: [segment({ content: long })] });
    // The heading names what the caller just asked about; the answer starts after it.
    expect(r.reply.startsWith(sentence)).toBe(true);
    expect(r.reply).not.toMatch(/[#*-]/);
    expect([...r.reply].length).toBeLessThanOrEqual(SPOKEN_ANSWER_MAX_CHARS);
    expect(r.reply.endsWith('。')).toBe(true);
    expect(r.intent).toMatchObject({ grade: 'B' });
  });

  it('knowledge hit on an FAQ passage: the question line is not read back', async () => {
    const content = '搬家了怎么移机？\n同城移机免收移机费，每年可免费移机 2 次。';
    const r = await run({ utterance: '移机要收费吗', knowledge: [segment({ content })] });
    expect(r.reply).toBe('同城移机免收移机费，每年可免费移机 2 次。');
  });

  it('fallback when nothing matches', async () => {
    const r = await run({ utterance: '今天天气怎么样' });
    expect(r.reply).toBe('抱歉，这个问题我需要确认一下，稍后会有专人联系您。请问还有其他问题吗？');
    expect(r.actions).toEqual([]);
  });

  it('uses the assistant’s own lines', async () => {
    const cfg = config({ conversation: { fallbackReply: '这个我记下了，回头请老师回复您。', maxTurns: 5 } });
    expect((await run({ config: cfg, utterance: '今天天气怎么样' })).reply).toBe(
      '这个我记下了，回头请老师回复您。',
    );
  });

  it('ends on the last allowed turn: knowledge answer then closing line; fallback replaced', async () => {
    const closing = '感谢您的接听，祝您生活愉快，再见！';
    const answered = await run({
      utterance: '地址在哪',
      turnIndex: 5,
      knowledge: [segment({ question: '地址', answer: '建国路 88 号。' })],
    });
    expect(answered.reply).toBe(`建国路 88 号。${closing}`);
    expect(answered.actions).toEqual(['end_call']);
    expect(answered.events.at(-1)).toEqual({
      type: 'action',
      action: 'end_call',
      detail: '已达到最多对话轮数（5 轮）',
    });

    const unanswered = await run({ utterance: '今天天气怎么样', turnIndex: 5 });
    expect(unanswered.reply).toBe(closing);
    expect(unanswered.actions).toEqual(['end_call']);

    expect((await run({ utterance: null, turnIndex: 6 })).reply).toBe(closing);
    expect((await run({ utterance: '今天天气怎么样', turnIndex: 4 })).actions).toEqual([]);
  });

  describe('a question the knowledge refused', () => {
    const FALLBACK = '抱歉，这个问题我需要确认一下，稍后会有专人联系您。请问还有其他问题吗？';
    const refused = { verdict: 'low_confidence' as const, confidence: 0.12, threshold: 0.3 };

    it('says someone will follow up and offers a person where transfer is allowed', async () => {
      const r = await run({ utterance: '你们营业厅几点开门', knowledgeVerdict: refused });
      expect(TRANSFER_OFFER).toBe('如需人工服务，请说“转人工”。');
      expect(r.reply).toBe(`${FALLBACK}${TRANSFER_OFFER}`);
      expect(r.actions).toEqual([]);
    });

    it('the caller taking the offer is transferred', async () => {
      const r = await run({
        utterance: '转人工',
        history: [{ role: 'assistant', content: `${FALLBACK}${TRANSFER_OFFER}` }],
        knowledgeVerdict: refused,
      });
      expect(r.actions).toEqual(['transfer']);
    });

    it('offers a person once per call', async () => {
      const r = await run({
        utterance: '那宽带怎么报修',
        history: [
          { role: 'assistant', content: `${FALLBACK}${TRANSFER_OFFER}` },
          { role: 'user', content: '好的' },
        ],
        knowledgeVerdict: { ...refused, verdict: 'no_match', confidence: 0 },
      });
      expect(r.reply).toBe(FALLBACK);
    });

    it('no offer without a transfer number, or with transfer off', async () => {
      for (const conversation of [
        { transferNumber: '', maxTurns: 5 },
        { transferNumber: '400-123-4567', transferWhen: 'never', maxTurns: 5 },
      ]) {
        const r = await run({
          config: config({ conversation }),
          utterance: '你们营业厅几点开门',
          knowledgeVerdict: refused,
        });
        expect(r.reply).toBe(FALLBACK);
        expect(r.actions).toEqual([]);
      }
    });

    it('never reads out a candidate it was handed when the verdict refuses', async () => {
      const r = await run({
        utterance: '营业时间是几点到几点',
        knowledge: [segment({ question: '报修时间', answer: '报修热线 24 小时受理。' })],
        knowledgeVerdict: { verdict: 'ambiguous', confidence: 0.41, threshold: 0.3 },
      });
      expect(r.reply).not.toContain('24 小时');
      expect(r.reply).toBe(`${FALLBACK}${TRANSFER_OFFER}`);
    });

    it('answers from the top usable segment when the verdict is answer', async () => {
      const r = await run({
        utterance: '营业时间是几点到几点',
        knowledge: [segment({ question: '营业时间', answer: '营业厅每天 9 点到 18 点营业。' })],
        knowledgeVerdict: { verdict: 'answer', confidence: 0.82, threshold: 0.3 },
      });
      expect(r.reply).toBe('营业厅每天 9 点到 18 点营业。');
    });

    it('on the last allowed turn the closing line replaces the fallback and the offer', async () => {
      const r = await run({ utterance: '你们营业厅几点开门', turnIndex: 5, knowledgeVerdict: refused });
      expect(r.reply).toBe('感谢您的接听，祝您生活愉快，再见！');
      expect(r.actions).toEqual(['end_call']);
    });
  });

  it('is deterministic', async () => {
    const turn = {
      utterance: '课程多少钱',
      knowledge: [segment({ question: '价格', answer: '每节课 200 元。' })],
    };
    expect((await run(turn)).events).toEqual((await run(turn)).events);
  });
});

describe('detectIntent', () => {
  const cfg = config();
  const grade = (utterance: string | null) => detectIntent(cfg, utterance)?.grade ?? null;

  it('a refusal wins over polite words around it', () => {
    expect(grade('好的好的，不需要了')).toBe('D');
    expect(grade('我要投诉你们')).toBe('D');
    expect(grade('试听是不错，可是太贵了')).toBe('D');
    expect(detectIntent(cfg, '别打了')).toEqual({ grade: 'D', reason: '客户明确拒绝：「别打了」' });
  });

  it('the assistant’s keywords come before built-in cues, A before B before C', () => {
    expect(detectIntent(cfg, '课程可以试听吗')).toEqual({ grade: 'A', reason: '命中 A 类关键词「试听」' });
    expect(grade('这个课程怎么样')).toBe('B');
    // Own C keyword beats the built-in B cue 好的.
    expect(grade('好的，下周再联系')).toBe('C');
  });

  it('built-in cues: acting now is A, interest is B, putting off is C', () => {
    expect(detectIntent(cfg, '那我怎么报名')).toEqual({ grade: 'A', reason: '内置规则：「怎么报名」' });
    expect(grade('一个月多少钱')).toBe('B');
    expect(grade('我考虑一下')).toBe('C');
  });

  it('a negated cue does not count', () => {
    expect(grade('不可以')).toBe(null);
    expect(grade('这个我不太感兴趣')).toBe('C');
    expect(grade('这个我不感兴趣')).toBe('D');
  });

  it('nothing for silence or small talk', () => {
    expect(grade(null)).toBe(null);
    expect(grade('   ')).toBe(null);
    expect(grade('今天天气怎么样')).toBe(null);
  });
});
