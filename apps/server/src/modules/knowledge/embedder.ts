import type { Database } from '../../db/client';
import { createEmbedder } from '../../engine/brain/embeddings';
import type { AppSecret } from '../../lib/secret-box';
import { findEmbeddingProvider } from '../llm-providers/llm-providers.service';

/** Turns texts into vectors (an OpenAI-compatible embeddings endpoint); one vector per text, same order. */
export type Embedder = (texts: string[]) => Promise<number[][]>;

/**
 * The project's embeddings client when one of its provider profiles names an embedding model,
 * else undefined (full-text retrieval only). Indexing, the hit test and the test chat all ask here,
 * so configuring a model switches the whole project to hybrid ranking.
 */
export async function embedderForProject(
  db: Database,
  secret: AppSecret,
  projectId: string,
): Promise<Embedder | undefined> {
  const provider = await findEmbeddingProvider(db, secret, projectId);
  if (!provider) return undefined;
  return createEmbedder({
    baseUrl: provider.baseUrl,
    apiKey: provider.apiKey,
    model: provider.embeddingModel,
  });
}
