import {
  type AssistantConfig,
  assistantConversation,
  type BrainAction,
  type RetrievedSegment,
} from '@callpilot/contracts';
import { detectIntent, findOptOut, findTransferRequest } from './intent';
import type { Brain, BrainEvent, BrainTurn } from './types';

/** About 30 seconds of speech: longer knowledge passages are cut at a sentence end. */
export const SPOKEN_ANSWER_MAX_CHARS = 120;

const DEFAULT_LINES = assistantConversation.parse({});
const SENTENCE_END = /[。！？!?；;]/u;

/** Markdown and line structure read aloud badly; a phone call gets plain sentences. */
export function toSpokenText(raw: string): string {
  const lines = raw
    .split(/\r?\n/)
    .map((line) =>
      line
        .replace(/^\s*(#{1,6}\s+|>\s*|[-*+]\s+|\d+[.)、]\s*)/u, '')
        .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/[*_`~]+/g, '')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter(Boolean);
  return lines
    .map((line, i) => (i < lines.length - 1 && !/[。！？!?；;，,：:]$/u.test(line) ? `${line}。` : line))
    .join('');
}

/** The first `max` characters, ended at the last full sentence (or clause) inside them. */
export function trimToSentence(text: string, max = SPOKEN_ANSWER_MAX_CHARS): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const head = chars.slice(0, max);
  for (let i = head.length - 1; i >= max / 3; i--) {
    if (SENTENCE_END.test(head[i] as string)) return head.slice(0, i + 1).join('');
  }
  for (let i = head.length - 1; i >= max / 3; i--) {
    if (head[i] === '，' || head[i] === ',') return `${head.slice(0, i).join('')}。`;
  }
  return `${head.join('')}…`;
}

/**
 * FAQ-style documents put the question (or a heading) on its own line above the answer; the caller
 * just asked it, so reading it back sounds odd. Leading heading and question lines are dropped
 * when something follows them.
 */
function withoutLeadingQuestion(content: string): string {
  const lines = content.split(/\r?\n/);
  let first = 0;
  while (first < lines.length - 1) {
    const line = lines[first] as string;
    if (line.trim() && !/^\s*#{1,6}\s/u.test(line) && !/[？?]\s*$/u.test(line)) break;
    first++;
  }
  return lines.slice(first).join('\n');
}

/** A question-answer pair is answered with its answer as written; a passage is trimmed to be spoken. */
export function spokenAnswer(segment: RetrievedSegment): string {
  if (segment.answer?.trim()) return toSpokenText(segment.answer);
  return trimToSentence(toSpokenText(withoutLeadingQuestion(segment.content)));
}

/** Splits a reply into sentences, so speech can start on the first one. */
function sentences(text: string): string[] {
  return text.match(/[^。！？!?]+[。！？!?]*/gu) ?? [text];
}

const line = (value: string, fallback: string) => (value.trim() ? value : fallback);

/** Said after the fallback when the knowledge refused and the assistant may transfer. */
export const TRANSFER_OFFER = '如需人工服务，请说“转人工”。';

const transferAllowed = (config: AssistantConfig) =>
  config.conversation.transferNumber !== '' && config.conversation.transferWhen !== 'never';

interface Decision {
  reply: string;
  actions: { action: BrainAction; detail: string }[];
}

function decide(config: AssistantConfig, input: BrainTurn, intentGrade: string | undefined): Decision {
  const c = config.conversation;
  const closing = line(c.closingLine, DEFAULT_LINES.closingLine);
  const text = input.utterance?.trim() || null;
  const lastTurn = input.turnIndex >= c.maxTurns;

  if (text) {
    const optOut = findOptOut(text);
    if (optOut) {
      return {
        reply: line(c.optOutReply, DEFAULT_LINES.optOutReply),
        actions: [
          { action: 'opt_out', detail: `客户要求不再来电：「${optOut}」` },
          { action: 'end_call', detail: '客户拒绝' },
        ],
      };
    }
    const goodbye = c.endCallPhrases.find((phrase) => text.includes(phrase));
    if (goodbye) {
      return { reply: closing, actions: [{ action: 'end_call', detail: `客户说「${goodbye}」` }] };
    }
    if (transferAllowed(config)) {
      const asked = findTransferRequest(text);
      if (asked || (c.transferWhen === 'on_intent_a' && intentGrade === 'A')) {
        return {
          reply: line(c.transferLine, DEFAULT_LINES.transferLine),
          actions: [
            { action: 'transfer', detail: asked ? `客户要求转人工：「${asked}」` : '客户有明确意向（A 类）' },
          ],
        };
      }
    }
  }

  const endAfterThis = lastTurn
    ? [{ action: 'end_call' as const, detail: `已达到最多对话轮数（${c.maxTurns} 轮）` }]
    : [];
  if (!text) {
    return {
      reply: lastTurn ? closing : line(c.silenceReprompt, DEFAULT_LINES.silenceReprompt),
      actions: endAfterThis,
    };
  }
  const judged = input.knowledgeVerdict;
  const best = input.knowledge[0];
  if (best && (!judged || judged.verdict === 'answer')) {
    const answer = spokenAnswer(best);
    return { reply: lastTurn ? `${answer}${closing}` : answer, actions: endAfterThis };
  }
  if (judged && !lastTurn) {
    // The knowledge was searched and could not answer surely: a wrong answer costs more on a call
    // than a promise to follow up, so say the fallback; offer a person once per call (offering it
    // every turn sounds like a machine), and the transfer-request check above acts on the reply.
    const offered = input.history.some((m) => m.role === 'assistant' && m.content.includes(TRANSFER_OFFER));
    const offer = transferAllowed(config) && !offered ? TRANSFER_OFFER : '';
    return { reply: `${line(c.fallbackReply, DEFAULT_LINES.fallbackReply)}${offer}`, actions: endAfterThis };
  }
  return {
    reply: lastTurn ? closing : line(c.fallbackReply, DEFAULT_LINES.fallbackReply),
    actions: endAfterThis,
  };
}

/**
 * The offline script brain (离线脚本模式): no model, same answer for the same input. Per utterance,
 * first match wins: opt-out → polite close, do-not-call and hang up; an end-call phrase → closing
 * line and hang up; a transfer request (when transfer is configured) → transfer; silence → the
 * re-prompt; a knowledge hit the knowledge judged answerable → its answer; otherwise the fallback
 * line, followed (when the knowledge refused and the assistant may transfer) by an offer of a
 * person. On the last allowed turn the call ends after the answer (a knowledge answer is still
 * given, a re-prompt, fallback or offer is replaced by the closing line, since nobody will hear
 * the callee's reply to it).
 */
export function createScriptBrain(): Brain {
  return {
    mode: 'script',
    async *turn(input: BrainTurn): AsyncGenerator<BrainEvent> {
      const intent = detectIntent(input.config, input.utterance);
      const { reply, actions } = decide(input.config, input, intent?.grade);
      for (const sentence of sentences(reply)) {
        if (input.signal?.aborted) return;
        yield { type: 'delta', text: sentence };
      }
      if (intent) yield { type: 'intent', grade: intent.grade, reason: intent.reason };
      for (const { action, detail } of actions) yield { type: 'action', action, detail };
    },
  };
}
