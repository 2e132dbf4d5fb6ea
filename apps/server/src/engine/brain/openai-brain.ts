import {
  type AssistantConfig,
  INTENT_GRADE_LABELS,
  type IntentGrade,
  intentGrade,
  type RetrievedSegment,
} from '@callpilot/contracts';
import type OpenAI from 'openai';
import { APIUserAbortError } from 'openai';
import type {
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { KnowledgeJudgement } from '../call/ports';
import { detectIntent, findOptOut } from './intent';
import {
  createOpenAIClient,
  PROVIDER_TIMEOUT_MS,
  type ProviderEndpoint,
  toProviderError,
} from './openai-client';
import type { Brain, BrainEvent, BrainTurn } from './types';

export interface OpenAIBrainOptions extends ProviderEndpoint {
  /** The profile's default model; the assistant's config.brain.model overrides it when set. */
  model: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** Phone-call manners for any model: what it writes is read aloud by a synthesiser. */
export const CALL_INSTRUCTIONS = [
  '【通话要求】你正在通过电话与客户交谈，你说的每句话都会被语音合成后播放给客户。',
  '1. 用简短、口语化的中文回答，每次一到三句话；不要使用 Markdown、列表、表情符号或网址。',
  '2. 优先依据【参考知识】回答；知识里没有的内容不要编造，可以告诉客户稍后由专人联系。',
  '3. 客户明确拒绝、要求不再来电或道别时，先礼貌道别，再调用 end_call 结束通话。',
  '4. 需要给客户发送文字信息（地址、链接、资料）时调用 send_sms。',
  '5. 能判断客户意向时调用 set_intent_grade 记录意向等级。',
].join('\n');

const TRANSFER_INSTRUCTION =
  '6. 客户要求转人工，或问题超出你的能力时，告诉客户正在转接，并调用 transfer_to_human。';

const fmt = (n: number) => n.toFixed(2);

/**
 * The knowledge found, with how sure the knowledge is. Below the threshold nothing is listed: a
 * model shown a weak candidate answers from it, and a wrong answer on a call costs more than a
 * promise that someone will follow up.
 */
function knowledgeBlock(
  config: AssistantConfig,
  knowledge: RetrievedSegment[],
  judged: KnowledgeJudgement | null,
): string {
  if (judged && judged.verdict !== 'answer') {
    const why =
      judged.verdict === 'no_match'
        ? '知识库中没有找到与客户问题相关的内容'
        : judged.verdict === 'ambiguous'
          ? `知识库中的候选答案互相矛盾（置信度 ${fmt(judged.confidence)}）`
          : `置信度 ${fmt(judged.confidence)} 低于 ${fmt(judged.threshold)}`;
    const rules = [
      `【参考知识】未找到可信的答案：${why}。`,
      '不要凭猜测或常识回答这个问题，也不要编造信息；请告诉客户这个问题需要确认，稍后会有专人跟进联系。',
    ];
    if (transferOffered(config))
      rules.push('并询问客户是否需要转人工服务；客户同意时调用 transfer_to_human。');
    return rules.join('\n');
  }
  if (knowledge.length === 0) return '';
  const items = knowledge.map((segment, i) =>
    segment.question && segment.answer
      ? `[${i + 1}] 问：${segment.question}\n答：${segment.answer}`
      : `[${i + 1}] ${segment.content}`,
  );
  const sureness = judged ? `置信度 ${fmt(judged.confidence)}，不低于阈值 ${fmt(judged.threshold)}，` : '';
  return `【参考知识】（来自知识库，${sureness}按相关度排序）\n${items.join('\n')}`;
}

function intentBlock(config: AssistantConfig): string {
  const lines = (Object.keys(INTENT_GRADE_LABELS) as IntentGrade[]).map((grade) => {
    const rule = config.intentRules[grade];
    const detail = [rule.description, rule.keywords.length ? `关键词：${rule.keywords.join('、')}` : '']
      .filter(Boolean)
      .join('；');
    return `${grade}（${INTENT_GRADE_LABELS[grade]}）${detail ? `：${detail}` : ''}`;
  });
  return `【意向等级】\n${lines.join('\n')}`;
}

const transferOffered = (config: AssistantConfig) =>
  config.conversation.transferNumber !== '' && config.conversation.transferWhen !== 'never';

/**
 * The system prompt: the assistant's own prompt, then the call rules, then the knowledge found
 * and how sure it is (`judged` null: nothing was searched).
 */
export function buildSystemPrompt(
  config: AssistantConfig,
  knowledge: RetrievedSegment[],
  judged: KnowledgeJudgement | null = null,
): string {
  const rules = transferOffered(config) ? `${CALL_INSTRUCTIONS}\n${TRANSFER_INSTRUCTION}` : CALL_INSTRUCTIONS;
  return [config.systemPrompt.trim(), rules, intentBlock(config), knowledgeBlock(config, knowledge, judged)]
    .filter(Boolean)
    .join('\n\n');
}

export function buildTools(config: AssistantConfig): ChatCompletionTool[] {
  const tool = (
    name: string,
    description: string,
    properties: Record<string, object>,
  ): ChatCompletionTool => ({
    type: 'function',
    function: {
      name,
      description,
      parameters: { type: 'object', properties, required: Object.keys(properties) },
    },
  });
  const tools = [
    tool('end_call', '结束本次通话（先说完道别语）', {
      reason: { type: 'string', description: '结束通话的原因' },
    }),
    tool('send_sms', '给客户发送一条短信', { content: { type: 'string', description: '短信内容' } }),
    tool('set_intent_grade', '记录客户的意向等级', {
      grade: {
        type: 'string',
        enum: intentGrade.options,
        description: 'A 有明确意向，B 可能有意向，C 无明确意向，D 明确拒绝',
      },
      reason: { type: 'string', description: '判断依据' },
    }),
  ];
  if (transferOffered(config)) {
    tools.splice(
      1,
      0,
      tool('transfer_to_human', '将通话转接给人工客服', {
        reason: { type: 'string', description: '转接原因' },
      }),
    );
  }
  return tools;
}

function toMessages(input: BrainTurn, knowledge: RetrievedSegment[]): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: buildSystemPrompt(input.config, knowledge, input.knowledgeVerdict ?? null) },
    ...input.history.map((m): ChatCompletionMessageParam => ({ role: m.role, content: m.content })),
    { role: 'user', content: input.utterance ?? '' },
  ];
}

interface PendingToolCall {
  id: string;
  name: string;
  arguments: string;
}

function parseArguments(raw: string): Record<string, unknown> {
  try {
    const value = JSON.parse(raw || '{}');
    return value && typeof value === 'object' ? value : {};
  } catch {
    // A model that emits broken JSON still meant to call the tool; act on it without details.
    return {};
  }
}

const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

/**
 * What the assistant says next, from an OpenAI-compatible chat model (DeepSeek, Qwen, Moonshot,
 * Ollama, vLLM...), streamed. Tool calls become actions and intents after the text. When the model
 * answers only with bookkeeping calls (intent, SMS) and no words, it is asked once more, with the
 * calls acknowledged, for what to say; a bare end_call or transfer gets the configured line.
 */
export function createOpenAIBrain(options: OpenAIBrainOptions): Brain {
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const client: OpenAI = createOpenAIClient(options, { fetch: options.fetch, timeoutMs });

  async function* stream(
    input: BrainTurn,
    messages: ChatCompletionMessageParam[],
    toolChoice: 'auto' | 'none',
    calls: PendingToolCall[],
  ): AsyncGenerator<string> {
    const config = input.config;
    const completion = await client.chat.completions.create(
      {
        model: config.brain.model || options.model,
        messages,
        temperature: config.brain.temperature,
        max_tokens: config.brain.maxTokens,
        stream: true,
        tools: buildTools(config),
        tool_choice: toolChoice,
      },
      { signal: input.signal },
    );
    const byIndex = new Map<number, PendingToolCall>();
    for await (const chunk of completion) {
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (delta.content) yield delta.content;
      for (const piece of delta.tool_calls ?? []) {
        // Providers send id and name once, then the JSON arguments in fragments keyed by index.
        let call = byIndex.get(piece.index);
        if (!call) {
          call = { id: piece.id ?? `call_${piece.index}`, name: '', arguments: '' };
          byIndex.set(piece.index, call);
          calls.push(call);
        }
        if (piece.id) call.id = piece.id;
        if (piece.function?.name) call.name += piece.function.name;
        if (piece.function?.arguments) call.arguments += piece.function.arguments;
      }
    }
  }

  return {
    mode: 'llm',
    async *turn(input: BrainTurn): AsyncGenerator<BrainEvent> {
      const c = input.config.conversation;
      // Silence needs no model: the configured re-prompt is what a caller expects, at once.
      if (input.utterance === null || input.utterance.trim() === '') {
        yield { type: 'delta', text: c.silenceReprompt || '您好，请问您还在听吗？' };
        return;
      }
      const messages = toMessages(input, input.knowledge);
      const calls: PendingToolCall[] = [];
      let spoken = '';
      try {
        for await (const piece of stream(input, messages, 'auto', calls)) {
          spoken += piece;
          yield { type: 'delta', text: piece };
        }
        const acts = calls.filter((call) => call.name === 'end_call' || call.name === 'transfer_to_human');
        if (spoken.trim() === '' && calls.length > 0 && acts.length === 0) {
          const followUp: ChatCompletionMessageParam[] = [
            ...messages,
            {
              role: 'assistant',
              content: null,
              tool_calls: calls.map(
                (call): ChatCompletionMessageFunctionToolCall => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.arguments || '{}' },
                }),
              ),
            },
            ...calls.map(
              (call): ChatCompletionMessageParam => ({
                role: 'tool',
                tool_call_id: call.id,
                content: '已完成',
              }),
            ),
          ];
          for await (const piece of stream(input, followUp, 'none', [])) {
            spoken += piece;
            yield { type: 'delta', text: piece };
          }
        }
      } catch (err) {
        if (err instanceof APIUserAbortError || input.signal?.aborted) return;
        throw toProviderError(err, options.apiKey, timeoutMs);
      }

      const transfers = transferOffered(input.config);
      const optOut = findOptOut(input.utterance);
      if (spoken.trim() === '') {
        if (optOut) {
          yield { type: 'delta', text: c.optOutReply };
        } else if (calls.some((call) => call.name === 'transfer_to_human') && transfers) {
          yield { type: 'delta', text: c.transferLine };
        } else if (calls.some((call) => call.name === 'end_call')) {
          yield { type: 'delta', text: c.closingLine };
        }
      }

      let graded = false;
      for (const call of calls) {
        if (call.name !== 'set_intent_grade') continue;
        const args = parseArguments(call.arguments);
        const grade = intentGrade.safeParse(text(args.grade).toUpperCase());
        if (grade.success && !graded) {
          graded = true;
          yield { type: 'intent', grade: grade.data, reason: text(args.reason) || '模型判断' };
        }
      }
      // The console always shows an intent when one is evident, even if the model did not record it.
      if (!graded) {
        const rules = detectIntent(input.config, input.utterance);
        if (rules) yield { type: 'intent', grade: rules.grade, reason: rules.reason };
      }

      // A request never to be called again is honoured whatever the model made of it: the number
      // must reach the do-not-call list, and the call ends.
      if (optOut) {
        yield { type: 'action', action: 'opt_out', detail: `客户要求不再来电：「${optOut}」` };
        if (!calls.some((call) => call.name === 'end_call')) {
          yield { type: 'action', action: 'end_call', detail: '客户拒绝' };
        }
      }
      for (const call of calls) {
        const args = parseArguments(call.arguments);
        if (call.name === 'end_call') {
          yield { type: 'action', action: 'end_call', detail: text(args.reason) || '模型结束通话' };
        } else if (call.name === 'transfer_to_human' && transfers) {
          yield { type: 'action', action: 'transfer', detail: text(args.reason) || '转接人工' };
        } else if (call.name === 'send_sms') {
          const content = text(args.content);
          if (content) yield { type: 'action', action: 'send_sms', detail: content };
        }
      }
    },
  };
}
