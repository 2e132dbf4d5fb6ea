import type { AssistantConfig, IntentGrade } from '@callpilot/contracts';

export interface DetectedIntent {
  grade: IntentGrade;
  reason: string;
}

/**
 * "Don't call me again": always honoured, whatever the question, and the number goes on the
 * project's do-not-call list.
 */
export const OPT_OUT_PHRASES = [
  '别再打',
  '别打了',
  '不要再打',
  '不要打了',
  '不用再打',
  '以后别打',
  '别给我打',
  '不要给我打',
  '拉黑',
  '投诉',
  '骚扰',
  '删除我的号码',
  '删掉我的号码',
  '把我的号码删',
  '别再联系',
  '不要再联系',
  '别联系我',
  '退订',
  '别烦我',
] as const;

/**
 * Refusals that are also common inside questions ("这个活动不需要预约吧？"): they count only when
 * the utterance is not a question.
 */
export const SOFT_REFUSAL_PHRASES = [
  '不需要',
  '不用了',
  '没兴趣',
  '没有兴趣',
  '不感兴趣',
  '没有需要',
  '不考虑',
] as const;

export const TRANSFER_PHRASES = [
  '转人工',
  '人工客服',
  '人工服务',
  '接人工',
  '找人工',
  '要人工',
  '找真人',
  '真人客服',
  '转接',
  '找你们经理',
  '找负责人',
] as const;

/**
 * Built-in cues, used after the assistant's own keywords. A: the callee asks to act now
 * (sign up, book, buy); B: interest without commitment (price, details, "可以"); C: neither
 * yes nor no (busy, will think about it).
 */
const BUILT_IN_CUES: Record<'A' | 'B' | 'C', readonly string[]> = {
  A: [
    '怎么报名',
    '我要报名',
    '帮我报名',
    '给我报名',
    '我要预约',
    '帮我预约',
    '怎么预约',
    '我要买',
    '怎么买',
    '怎么购买',
    '下单',
    '怎么办理',
    '我要办',
    '加微信',
    '加个微信',
    '发我地址',
  ],
  B: [
    '感兴趣',
    '有兴趣',
    '多少钱',
    '什么价格',
    '价格',
    '费用',
    '优惠',
    '了解一下',
    '详细说说',
    '介绍一下',
    '听起来不错',
    '可以',
    '好的',
  ],
  C: [
    '不太感兴趣',
    '考虑一下',
    '再说吧',
    '以后再说',
    '再看看',
    '没时间',
    '在忙',
    '不确定',
    '商量一下',
    '问问家人',
  ],
};

/** 不感兴趣 must not count as 感兴趣, nor 不可以 as 可以, nor 不太感兴趣 as 感兴趣. */
const NEGATIONS = ['不', '没', '别', '未', '不太', '不是很', '不怎么', '不大'];

const QUESTION_END = /[？?吗呢吧]\s*[。！!]?\s*$/u;

/** The first phrase found in the text that is not negated by the character before it. */
function findCue(text: string, phrases: readonly string[]): string | null {
  for (const phrase of phrases) {
    let from = 0;
    while (true) {
      const at = text.indexOf(phrase, from);
      if (at < 0) break;
      const before = text.slice(Math.max(0, at - 3), at);
      if (!NEGATIONS.some((negation) => before.endsWith(negation))) return phrase;
      from = at + 1;
    }
  }
  return null;
}

const findAny = (text: string, phrases: readonly string[]) => phrases.find((p) => text.includes(p)) ?? null;

/**
 * "Don't call (me) (again)" in its many orders: 别再给我打电话, 不要再给我们打了, 以后别跟我联系,
 * 不用再来电. Words may sit between the "don't" and the "call", so a fixed phrase list misses them.
 */
const DO_NOT_CALL_PATTERN =
  /(?:别|不要|不用|甭|勿)再?(?:给|跟|和|与)?(?:我们?|俺)?再?(?:打电话|打|来电|致电|联系|骚扰)/u;

/** The opt-out phrase the callee used, or null. */
export function findOptOut(utterance: string): string | null {
  const hard = findAny(utterance, OPT_OUT_PHRASES) ?? DO_NOT_CALL_PATTERN.exec(utterance)?.[0];
  if (hard) return hard;
  if (QUESTION_END.test(utterance)) return null;
  return findAny(utterance, SOFT_REFUSAL_PHRASES);
}

export const findTransferRequest = (utterance: string) => findAny(utterance, TRANSFER_PHRASES);

/**
 * Rules-based intent of one utterance. Precedence, first match wins:
 * 1. D: an opt-out or refusal (built-in phrases or the assistant's D keywords): a clear "no"
 *    outweighs any polite word around it ("好的好的，不需要了").
 * 2. The assistant's own A, then B, then C keywords: they describe this assistant's job and so
 *    are more specific than the built-in cues.
 * 3. Built-in A, then B, then C cues.
 * Non-D keywords preceded by a negation (不/没/别/未) do not count.
 */
export function detectIntent(config: AssistantConfig, utterance: string | null): DetectedIntent | null {
  const text = utterance?.trim();
  if (!text) return null;
  const rules = config.intentRules;

  const optOut = findOptOut(text);
  if (optOut) return { grade: 'D', reason: `客户明确拒绝：「${optOut}」` };
  const customD = findAny(text, rules.D.keywords);
  if (customD) return { grade: 'D', reason: `命中 D 类关键词「${customD}」` };

  for (const grade of ['A', 'B', 'C'] as const) {
    const hit = findCue(text, rules[grade].keywords);
    if (hit) return { grade, reason: `命中 ${grade} 类关键词「${hit}」` };
  }
  for (const grade of ['A', 'B', 'C'] as const) {
    const hit = findCue(text, BUILT_IN_CUES[grade]);
    if (hit) return { grade, reason: `内置规则：「${hit}」` };
  }
  return null;
}
