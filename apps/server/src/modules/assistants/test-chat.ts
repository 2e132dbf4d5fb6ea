import type {
  AssistantConfig,
  ChatMessage,
  RetrievedSegment,
  TestChatEvent,
  UsedSegment,
} from '@callpilot/contracts';
import type { Database } from '../../db/client';
import { type BrainProvider, createBrain } from '../../engine/brain/create-brain';
import type { BrainEvent } from '../../engine/brain/types';
import type { KnowledgeLookup } from '../../engine/call/ports';
import { AppError, badRequest } from '../../lib/errors';
import type { LlmAssist } from '../knowledge/answer';
import { lookupForAssistant } from '../knowledge/call-knowledge';
import type { Embedder } from '../knowledge/embedder';

export type ProviderResolver = (projectId: string, providerId: string) => Promise<BrainProvider | null>;

/** The conversation must end with the callee, since the assistant answers it. */
export function checkMessages(messages: ChatMessage[]) {
  if (messages.length === 0) return;
  const last = messages[messages.length - 1]!;
  if (last.role !== 'user') throw badRequest('字段 messages：最后一条消息须为客户的发言');
  if (!last.content.trim()) throw badRequest('字段 messages：请输入客户的发言');
}

const toUsed = (segment: RetrievedSegment): UsedSegment => ({
  id: segment.id,
  knowledgeBaseId: segment.knowledgeBaseId,
  documentName: segment.documentName,
  content: segment.content,
  score: segment.score,
});

const elapsed = (since: number) => Math.round((performance.now() - since) * 10) / 10;

/** Safe to show in the console: our own messages are Chinese and key-free; anything else is not shown. */
const chatFailure = (err: unknown) =>
  err instanceof AppError && err.statusCode !== 500 ? err.message : '小助手回复失败，请稍后重试';

/**
 * One test-chat turn as events, in the order the contract documents: segments (when knowledge
 * was searched), the reply's deltas, then intent and actions, then done; or an error, which ends
 * it. The config must already be loaded and filled, so that a missing assistant is a plain 404
 * before the stream starts.
 */
export async function* testChatTurn(
  db: Database,
  options: {
    projectId: string;
    config: AssistantConfig;
    messages: ChatMessage[];
    resolveProvider: ProviderResolver;
    /** The project's embeddings client, for hybrid knowledge retrieval; absent means full text. */
    embedderFor?: (projectId: string) => Promise<Embedder | undefined>;
    /** The assistant's model as knowledge rewriter and re-ranker, as calls get it (call-knowledge.ts). */
    assistFor?: (projectId: string, config: AssistantConfig) => Promise<LlmAssist | undefined>;
    signal?: AbortSignal;
    onError?: (err: unknown) => void;
  },
): AsyncGenerator<TestChatEvent> {
  const started = performance.now();
  const { config, messages } = options;
  const providerId = config.brain.providerId;
  const mode = providerId ? 'llm' : 'script';

  if (messages.length === 0) {
    const reply = config.openingLine;
    yield { type: 'delta', text: reply };
    const totalMs = elapsed(started);
    yield { type: 'done', reply, mode, latency: { retrievalMs: 0, firstTokenMs: 0, brainMs: 0, totalMs } };
    return;
  }

  try {
    const utterance = messages[messages.length - 1]!.content;
    let lookup: KnowledgeLookup | null = null;
    let retrievalMs = 0;
    if (config.knowledge.baseIds.length > 0) {
      const retrievalStart = performance.now();
      // Judged exactly as a call judges it, so what the operator tries here is what callers get.
      lookup = await lookupForAssistant(
        db,
        {
          embedderFor: async (projectId) => options.embedderFor?.(projectId),
          assistFor: options.assistFor,
          onError: (err) => options.onError?.(err),
        },
        options.projectId,
        config,
        utterance,
      );
      retrievalMs = elapsed(retrievalStart);
      yield {
        type: 'segments',
        segments: lookup.segments.map(toUsed),
        verdict: lookup.verdict,
        confidence: lookup.confidence,
        threshold: lookup.threshold,
      };
    }

    // A profile that no longer resolves runs the script, as a real call would (createBrain's rule).
    const provider = providerId ? await options.resolveProvider(options.projectId, providerId) : null;
    const brain = createBrain({ config, provider });
    const brainStart = performance.now();
    let firstTokenMs = 0;
    let reply = '';
    const after: BrainEvent[] = [];
    for await (const event of brain.turn({
      config,
      history: messages.slice(0, -1),
      utterance,
      knowledge: lookup?.segments ?? [],
      knowledgeVerdict: lookup
        ? { verdict: lookup.verdict, confidence: lookup.confidence, threshold: lookup.threshold }
        : null,
      turnIndex: messages.filter((message) => message.role === 'user').length,
      signal: options.signal,
    })) {
      if (event.type === 'delta') {
        if (!reply) firstTokenMs = elapsed(brainStart);
        reply += event.text;
        yield event;
      } else {
        after.push(event);
      }
    }
    const brainMs = elapsed(brainStart);
    // The contract orders intent before actions, whatever order the model called its tools in.
    for (const event of after) if (event.type === 'intent') yield event;
    for (const event of after) if (event.type === 'action') yield event;
    yield {
      type: 'done',
      reply,
      mode: brain.mode,
      latency: { retrievalMs, firstTokenMs, brainMs, totalMs: elapsed(started) },
    };
  } catch (err) {
    if (options.signal?.aborted) return;
    options.onError?.(err);
    yield { type: 'error', message: chatFailure(err) };
  }
}
