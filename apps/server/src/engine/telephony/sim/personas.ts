import { type SimPersona, TALKING_SIM_PERSONAS } from '@callpilot/contracts';
import type { Random } from './random';

/** Personas whose callee answers and talks (the rest are carrier outcomes). */
export type TalkingPersona = (typeof TALKING_SIM_PERSONAS)[number];

export const TALKING_PERSONAS: readonly TalkingPersona[] = TALKING_SIM_PERSONAS;

export const isTalkingPersona = (persona: SimPersona): persona is TalkingPersona =>
  (TALKING_PERSONAS as readonly string[]).includes(persona);

/**
 * What a realistic outbound campaign reaches: about 35% never answered by a person, the rest a
 * spread of attitudes. Weights, not percentages; they only need to be proportional.
 */
export const DEFAULT_PERSONA_MIX: Readonly<Record<SimPersona, number>> = {
  busy: 8,
  no_answer: 12,
  powered_off: 5,
  vacant: 4,
  rejected: 4,
  voicemail: 2,
  interested: 15,
  hesitant: 17,
  refuses: 12,
  asks_question: 10,
  asks_human: 4,
  silent: 3,
  hangs_up: 4,
};

export const DEFAULT_QUESTIONS: readonly string[] = [
  '你们的营业时间是几点到几点？',
  '这个需要收费吗？',
  '在哪里可以办理？',
  '最近有什么优惠活动吗？',
  '办理需要带什么材料？',
];

/** How the callee answers one assistant line. Times are from the start of that line. */
export type CalleeReaction =
  | {
      kind: 'speak';
      text: string;
      dtmf: string | null;
      /** Pause after the line ended before the callee starts speaking. */
      thinkMs: number;
      /** Starts speaking this far into the line (barge-in), when the line may be interrupted. */
      bargeInAtMs: number | null;
    }
  | { kind: 'silent' }
  | { kind: 'hangup'; atMs: number };

const CLOSING = /再见|拜拜|祝您/u;
const TRANSFERRING = /转接|转人工|人工客服.*稍候|请稍候/u;
const DTMF_PROMPT = /按\s*([0-9*#])/gu;
const HUMAN_DTMF = /人工[^，。,；;]*?按\s*([0-9*#])|按\s*([0-9*#])[^，。,；;]*?人工/u;

const digitsAskedFor = (line: string) => [...line.matchAll(DTMF_PROMPT)].map((m) => m[1] as string);

/** Spoken length of a line: Mandarin runs at about 4-5 characters a second; punctuation pauses. */
export function speechDurationMs(text: string, charsPerSecond: number): number {
  const spoken = text.replace(/[\s\p{P}\p{S}]/gu, '').length;
  const pauses = (text.match(/[，,、；;。！？!?…]/gu) ?? []).length;
  return Math.max(300, Math.round((spoken * 1000) / charsPerSecond + pauses * 120));
}

/**
 * One simulated callee: a small script per persona that reacts to what the assistant says
 * (its closing, a transfer, a DTMF prompt) and otherwise moves the conversation on by stage.
 * Every random choice comes from the call's own PRNG, so a call replays identically.
 */
export class SimCallee {
  /** Assistant lines heard so far (the opening is line 0). */
  private heard = 0;
  private readonly questions: string[];
  private readonly hangupAfter: number;

  constructor(
    readonly persona: TalkingPersona | 'voicemail',
    private readonly rng: Random,
    questions: readonly string[],
  ) {
    const pool = [...(questions.length > 0 ? questions : DEFAULT_QUESTIONS)];
    const count = Math.min(pool.length, rng.int(2, 3));
    this.questions = [];
    for (let i = 0; i < count; i++)
      this.questions.push(pool.splice(rng.int(0, pool.length - 1), 1)[0] as string);
    this.hangupAfter = rng.int(1, 2);
  }

  /** Characters per second of this callee's speech. */
  speechRate(): number {
    return 4 + this.rng.next();
  }

  recognitionMs(): number {
    return this.rng.int(150, 600);
  }

  react(line: string, lineMs: number): CalleeReaction {
    const stage = this.heard++;
    const rng = this.rng;
    if (this.persona === 'silent' || this.persona === 'voicemail') return { kind: 'silent' };

    if (this.persona === 'hangs_up') {
      if (stage < this.hangupAfter)
        return this.say(rng.pick(['喂？哪位？', '嗯？什么事？', '喂，你好，你说。']));
      // Half of them hang up while the assistant is still talking, the rest right after it.
      return rng.chance(0.5)
        ? { kind: 'hangup', atMs: Math.round(lineMs * (0.3 + rng.next() * 0.5)) }
        : { kind: 'hangup', atMs: lineMs + rng.int(500, 2000) };
    }

    if (CLOSING.test(line)) {
      return rng.chance(0.4)
        ? this.say('好的，再见。')
        : { kind: 'hangup', atMs: lineMs + rng.int(500, 1500) };
    }
    const digits = digitsAskedFor(line);
    // A menu may mention 转人工 as one of its keys; only a line without keys is a transfer in progress.
    if (digits.length === 0 && TRANSFERRING.test(line)) return { kind: 'silent' };

    switch (this.persona) {
      case 'interested': {
        if (digits.length > 0) return this.press(digits[0] as string);
        const lines = [
          ['方便，你说吧。', '可以，您说。', '嗯，是我，什么事？'],
          ['听起来不错，能详细说说吗？', '这个我挺感兴趣的，具体怎么弄？', '好的，我有兴趣，多少钱？'],
          ['好的，那我怎么报名？', '可以，帮我报名吧。', '行，我要预约一下。'],
          ['好的，没问题。', '行，就这么定了。', '可以可以。'],
        ];
        return this.say(rng.pick(lines[stage] ?? ['好的，谢谢你，再见。']), lineMs, 0.2);
      }
      case 'hesitant': {
        if (digits.length > 1 && rng.chance(0.3)) return this.press(digits[1] as string);
        const lines = [
          ['嗯，你说。', '哦，什么事啊？'],
          ['这个……多少钱啊？', '有什么优惠吗？', '价格怎么样？'],
          ['我再考虑考虑吧。', '嗯……我得跟家里商量一下。', '现在还不好说，我再考虑一下。'],
          ['以后再说吧。', '再看看吧，现在定不下来。'],
        ];
        return this.say(rng.pick(lines[stage] ?? ['先这样吧，再见。']), lineMs, 0.1, [800, 2500]);
      }
      case 'refuses': {
        if (stage === 0)
          return this.say(rng.pick(['不需要，谢谢。', '我不需要。', '没兴趣，不需要了。']), lineMs, 0.5);
        if (stage === 1)
          return this.say(rng.pick(['别再给我打电话了！', '说了不需要，别再打了。']), lineMs, 0.6);
        return { kind: 'hangup', atMs: rng.int(1000, 2000) };
      }
      case 'asks_question': {
        const question = this.questions[stage];
        if (question)
          return this.say(stage === 0 ? `您好，我想问一下，${question}` : `那${question}`, lineMs, 0.15);
        if (stage === this.questions.length)
          return this.say(rng.pick(['好的，明白了，谢谢。', '好的，我了解了。']));
        return this.say('好的，再见。');
      }
      case 'asks_human': {
        const human = HUMAN_DTMF.exec(line);
        if (human) return this.press((human[1] ?? human[2]) as string);
        const lines = [
          ['你是机器人吧？给我转人工。', '我要找人工客服。', '转人工。'],
          ['我说了，转人工客服！', '别说了，我要人工服务。'],
        ];
        return this.say(rng.pick(lines[stage] ?? ['算了，再见。']), lineMs, 0.3);
      }
    }
  }

  private say(
    text: string,
    lineMs = 0,
    bargeInChance = 0,
    thinkRange: [number, number] = [300, 1200],
  ): CalleeReaction {
    const thinkMs = this.rng.int(thinkRange[0], thinkRange[1]);
    // Only long lines get talked over: nobody interrupts a short question.
    const bargeIn = lineMs >= 5000 && this.rng.chance(bargeInChance);
    return {
      kind: 'speak',
      text,
      dtmf: null,
      thinkMs,
      bargeInAtMs: bargeIn ? Math.round(lineMs * (0.35 + this.rng.next() * 0.4)) : null,
    };
  }

  private press(digit: string): CalleeReaction {
    return { kind: 'speak', text: '', dtmf: digit, thinkMs: this.rng.int(800, 2500), bargeInAtMs: null };
  }
}
