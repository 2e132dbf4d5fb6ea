import { and, inArray, isNotNull } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { knowledgeSegments } from '../../db/schema';
import type { KnowledgeSource } from '../../engine/call/ports';
import type { Embedder } from './embedder';
import { retrieve } from './retrieval';

/** The engine's view of the knowledge module (see engine/call/ports.ts). */
export function knowledgeSource(
  db: Database,
  options: {
    embedderFor: (projectId: string) => Promise<Embedder | undefined>;
    onError?: (err: unknown, context: string) => void;
  },
): KnowledgeSource {
  return {
    async retrieve(projectId, config, query) {
      if (config.knowledge.baseIds.length === 0) return [];
      const found = await retrieve(db, {
        projectId,
        knowledgeBaseIds: config.knowledge.baseIds,
        query,
        topK: config.knowledge.topK,
        scoreThreshold: config.knowledge.scoreThreshold,
        embedder: await options.embedderFor(projectId),
        onEmbedderError: (err) => options.onError?.(err, 'embeddings'),
      });
      return found.segments;
    },
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
