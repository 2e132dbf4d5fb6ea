import type { AssistantConfig, HitTestSegment, RetrievedSegment } from '@callpilot/contracts';
import { and, inArray, isNotNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeSegments } from '../../db/schema';
import type { KnowledgeLookup, KnowledgeSource } from '../../engine/call/ports';
import { answerQuestion, type KnowledgeAnswer, type LlmAssist, usableSegments } from './answer';
import type { Embedder } from './embedder';

/** Only the fields the engine reads: the hit test's explanations stay out of call records. */
const retrieved = (s: HitTestSegment): RetrievedSegment => ({
  id: s.id,
  knowledgeBaseId: s.knowledgeBaseId,
  documentId: s.documentId,
  documentName: s.documentName,
  content: s.content,
  question: s.question,
  answer: s.answer,
  score: s.score,
});

/** answerQuestion's answer as the engine sees it (see KnowledgeLookup in engine/call/ports.ts). */
export function toLookup(answer: KnowledgeAnswer): KnowledgeLookup {
  const segments = usableSegments(answer).map(retrieved);
  const best = answer.segments[0];
  return {
    verdict: answer.verdict,
    confidence: answer.confidence,
    threshold: answer.threshold,
    segments,
    nearest: segments.length === 0 && best ? retrieved(best) : null,
    rewriteMs: answer.rewriteMs,
    rerankMs: answer.rerankMs,
  };
}

/** Nothing searched (no bases linked): nothing found, and nothing to refuse from. */
export const emptyLookup = (config: AssistantConfig): KnowledgeLookup => ({
  verdict: 'no_match',
  confidence: 0,
  threshold: config.knowledge.scoreThreshold,
  segments: [],
  nearest: null,
  rewriteMs: null,
  rerankMs: null,
});

export interface KnowledgeSourceOptions {
  embedderFor: (projectId: string) => Promise<Embedder | undefined>;
  /**
   * The assistant's model as rewriter and re-ranker (llm-assist.ts), asked only when the assistant
   * turned 大模型改写与重排 on and runs a model profile; undefined runs without it.
   */
  assistFor?: (projectId: string, config: AssistantConfig) => Promise<LlmAssist | undefined>;
  onError?: (err: unknown, context: string) => void;
}

/** The assistant's LLM assist when its settings ask for it and the runtime can build one. */
export async function llmAssistOf(
  options: Pick<KnowledgeSourceOptions, 'assistFor'>,
  projectId: string,
  config: AssistantConfig,
): Promise<LlmAssist | undefined> {
  if (!config.knowledge.llmAssist || !config.brain.providerId || !options.assistFor) return undefined;
  return options.assistFor(projectId, config);
}

/**
 * One utterance judged against an assistant's bases, exactly as a call does: the test chat and
 * the flow simulation ask here too, so what an operator tries is what callers get.
 */
export async function lookupForAssistant(
  db: Database,
  options: KnowledgeSourceOptions,
  projectId: string,
  config: AssistantConfig,
  query: string,
): Promise<KnowledgeLookup> {
  if (config.knowledge.baseIds.length === 0) return emptyLookup(config);
  const answer = await answerQuestion(db, {
    projectId,
    knowledgeBaseIds: config.knowledge.baseIds,
    query,
    topK: config.knowledge.topK,
    threshold: config.knowledge.scoreThreshold,
    embedder: await options.embedderFor(projectId),
    onEmbedderError: (err) => options.onError?.(err, 'embeddings'),
    llm: await llmAssistOf(options, projectId, config),
  });
  return toLookup(answer);
}

/** The engine's view of the knowledge module (see engine/call/ports.ts). */
export function knowledgeSource(db: Database, options: KnowledgeSourceOptions): KnowledgeSource {
  return {
    retrieve: (projectId, config, query) => lookupForAssistant(db, options, projectId, config, query),
    async questions(config, limit) {
      if (config.knowledge.baseIds.length === 0) return [];
      const rows = await db
        .select({ question: knowledgeSegments.question })
        .from(knowledgeSegments)
        .where(
          and(
            inArray(knowledgeSegments.knowledgeBaseId, config.knowledge.baseIds),
            isNotNull(knowledgeSegments.question),
          ),
        )
        .limit(limit);
      return rows.map((r) => r.question as string);
    },
  };
}
