import type OpenAI from 'openai';
import type { Database } from '../../db/client';
import { createOpenAIClient, ProviderError, toProviderError } from '../../engine/brain/openai-client';
import { badRequest } from '../../lib/errors';
import type { AppSecret } from '../../lib/secret-box';
import { resolveProvider } from '../llm-providers/llm-providers.service';
import type { LlmAssist } from './answer';

/** The re-ranker sees at most this many candidates, each cut to this many characters. */
export const RERANK_MAX_CANDIDATES = 8;
export const RERANK_CANDIDATE_CHARS = 300;

export const REWRITE_PROMPT = [
  '你是电话客服系统的问题整理员。用户消息是来电者在电话里说的原话（语音识别结果），可能夹着语气词、客套话、重复、口语说法、念出来的数字，或几句话连在一起。',
  '请把它改写成一个清楚、完整、可以单独理解的问题：',
  '- 去掉语气词和客套话（如“喂”“你好”“那个”“就是”“我想问一下”），保留全部实际信息（业务、设备、数字、时间、地点）；',
  '- 念出来的数字写成阿拉伯数字（如“幺零零八六”写成“10086”，“三十九块”写成“39元”）；',
  '- 口语说法换成常用说法，但不要添加来电者没说的内容；',
  '- 只输出改写后的这一个问题，不要回答，不要解释，不要加引号或前缀。',
].join('\n');

export const RERANK_PROMPT = [
  '你是知识库检索的复核员。用户消息里有来电者的问题和若干带编号的候选段落。',
  '请判断哪些候选能直接回答这个问题，按回答得好坏从好到差排列，只输出 JSON：{"ids": ["编号", ...]}。',
  '- 只列出确实回答了这个问题的候选；话题相近但回答的是别的问题的，不要列出；',
  '- 没有候选能回答时输出 {"ids": []}；',
  '- 除这个 JSON 外不要输出任何文字。',
].join('\n');

/** Some servers (Qwen3, DeepSeek R1 on vLLM/Ollama) put their reasoning inline before the answer. */
const withoutThinking = (text: string) => text.replace(/<think>[\s\S]*?(<\/think>|$)/g, '');

const QUOTES = /^["'“”‘’「」『』《》\s]+|["'“”‘’「」『』《》\s]+$/g;
const LABEL = /^(改写后的问题|改写后|改写|问题)\s*[:：]\s*/;

/** The model's rewrite reduced to the question itself: first line, no label, no quotes. */
export function cleanRewrite(output: string): string {
  const line =
    withoutThinking(output)
      .split(/\r?\n/)
      .map((l) => l.trim())
      .find((l) => l !== '') ?? '';
  return line.replace(LABEL, '').replace(QUOTES, '').trim();
}

const cut = (text: string, max: number) => {
  const chars = [...text.replace(/\s+/g, ' ').trim()];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
};

/**
 * The candidates as the model reads them. They are numbered 1..n rather than shown by id: a
 * model copies "3" back reliably, a 36-character id less so, and the prompt stays short.
 */
export function rerankMessage(query: string, candidates: { id: string; text: string }[]): string {
  const lines = candidates
    .slice(0, RERANK_MAX_CANDIDATES)
    .map((c, i) => `[${i + 1}] ${cut(c.text, RERANK_CANDIDATE_CHARS)}`);
  return `问题：${query}\n\n候选：\n${lines.join('\n')}`;
}

/**
 * The candidate ids the model picked, best first. Unknown numbers and repeats are dropped (a
 * model may invent a fourth of three); anything that is not the asked-for JSON throws, so the
 * caller keeps its own ranking instead of trusting a guess.
 */
export function parseRerank(output: string, candidates: { id: string }[]): string[] {
  const text = withoutThinking(output)
    .replace(/```(?:json)?/gi, '')
    .trim();
  const start = text.search(/[[{]/);
  if (start < 0) throw new Error(`re-ranker answered no JSON: ${cut(text, 80)}`);
  const end = Math.max(text.lastIndexOf('}'), text.lastIndexOf(']'));
  const parsed: unknown = JSON.parse(text.slice(start, end + 1));
  const ids = Array.isArray(parsed) ? parsed : (parsed as { ids?: unknown } | null)?.ids;
  if (!Array.isArray(ids)) throw new Error('re-ranker JSON has no "ids" list');
  const shown = candidates.slice(0, RERANK_MAX_CANDIDATES);
  const picked: string[] = [];
  for (const raw of ids) {
    const label = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
    // The model may also echo a candidate's real id; that is as good as its number.
    const candidate = Number.isInteger(label)
      ? shown[label - 1]
      : shown.find((c) => typeof raw === 'string' && c.id === raw);
    if (candidate && !picked.includes(candidate.id)) picked.push(candidate.id);
  }
  return picked;
}

export interface LlmEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
}

export interface LlmAssistOptions {
  /** An assistant's own chat model (config.brain.model) in place of the profile's default. */
  model?: string;
  fetch?: typeof fetch;
  /** The client's own cap; the real budget (about 1.5 s each) is the caller's AbortSignal. */
  timeoutMs?: number;
}

/** Rewriting and re-ranking through one chat model, with the real `openai` client. */
export function createLlmAssist(endpoint: LlmEndpoint, options: LlmAssistOptions = {}): LlmAssist {
  const client: OpenAI = createOpenAIClient(endpoint, options);
  // Not every OpenAI-compatible server knows response_format; one that refuses it is asked
  // without it from then on, and the prompt alone asks for JSON.
  let jsonMode = true;

  const complete = async (
    body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
    signal: AbortSignal,
  ): Promise<string> => {
    try {
      // No retries: a second attempt would not fit in the caller's budget of a second or two.
      const completion = await client.chat.completions.create(body, { signal, maxRetries: 0 });
      return completion.choices[0]?.message?.content ?? '';
    } catch (err) {
      throw toProviderError(err, endpoint.apiKey, options.timeoutMs);
    }
  };

  return {
    async rewrite(query, signal) {
      const output = await complete(
        {
          model: endpoint.model,
          messages: [
            { role: 'system', content: REWRITE_PROMPT },
            { role: 'user', content: query },
          ],
          temperature: 0,
          max_tokens: 160,
        },
        signal,
      );
      const rewritten = cleanRewrite(output);
      // A rewrite far longer than the words it restates is an answer or a lecture, not the
      // question: searching with it would rank whatever the model made up.
      const limit = Math.max(2 * [...query].length, [...query].length + 40);
      return rewritten && [...rewritten].length <= limit ? rewritten : query;
    },

    async rerank(query, candidates, signal) {
      if (candidates.length === 0) return [];
      const body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
        model: endpoint.model,
        messages: [
          { role: 'system', content: RERANK_PROMPT },
          { role: 'user', content: rerankMessage(query, candidates) },
        ],
        temperature: 0,
        max_tokens: 80,
      };
      let output: string;
      if (jsonMode) {
        try {
          output = await complete({ ...body, response_format: { type: 'json_object' } }, signal);
        } catch (err) {
          const refused =
            err instanceof ProviderError && (err.upstreamStatus === 400 || err.upstreamStatus === 422);
          if (!refused || signal.aborted) throw err;
          jsonMode = false;
          output = await complete(body, signal);
        }
      } else {
        output = await complete(body, signal);
      }
      return parseRerank(output, candidates);
    },
  };
}

/**
 * The project's model profile as an LlmAssist; undefined when the profile is not the project's
 * or names no chat model. Its key is decrypted here and stays in the client.
 */
export async function llmAssistFor(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string,
  options?: LlmAssistOptions,
): Promise<LlmAssist | undefined> {
  const provider = await resolveProvider(db, secret, projectId, providerId);
  const model = (options?.model?.trim() || provider?.model.trim()) ?? '';
  if (!provider || model === '') return undefined;
  return createLlmAssist({ baseUrl: provider.baseUrl, apiKey: provider.apiKey, model }, options);
}

/**
 * The hit test's `llmProviderId`: no id, no model steps; an id that is not one of the project's
 * chat-capable profiles is the caller's mistake (400), not a silent fallback.
 */
export async function hitTestLlmAssist(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string | undefined,
): Promise<LlmAssist | undefined> {
  if (!providerId) return undefined;
  const assist = await llmAssistFor(db, secret, projectId, providerId);
  if (!assist) throw badRequest('字段 llmProviderId：模型配置不存在');
  return assist;
}
