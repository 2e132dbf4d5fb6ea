import { createOpenAIClient, PROVIDER_TIMEOUT_MS, toProviderError } from './openai-client';

/** Many providers cap inputs per request (DashScope at 25, OpenAI far higher); 64 is safe for most. */
export const EMBEDDING_BATCH_SIZE = 64;

export type Embedder = (texts: string[]) => Promise<number[][]>;

/**
 * Embeddings through an OpenAI-compatible /embeddings endpoint, batched, in input order.
 * Failures surface as ProviderError (Chinese message, no key), like the chat brain's.
 */
export function createEmbedder(options: {
  baseUrl: string;
  apiKey: string;
  model: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  batchSize?: number;
}): Embedder {
  const timeoutMs = options.timeoutMs ?? PROVIDER_TIMEOUT_MS;
  const client = createOpenAIClient(options, { fetch: options.fetch, timeoutMs });
  const batchSize = Math.max(1, Math.min(options.batchSize ?? EMBEDDING_BATCH_SIZE, EMBEDDING_BATCH_SIZE));
  return async (texts) => {
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      const batch = texts.slice(start, start + batchSize);
      try {
        const res = await client.embeddings.create({
          model: options.model,
          input: batch,
          // Without it the package asks for base64 and decodes it; plain floats work with every server.
          encoding_format: 'float',
        });
        // The protocol carries an index per vector; some servers do not keep input order.
        const ordered = [...res.data].sort((a, b) => a.index - b.index);
        if (ordered.length !== batch.length) {
          throw new Error(
            `embeddings endpoint answered ${ordered.length} vectors for ${batch.length} inputs`,
          );
        }
        for (const item of ordered) vectors.push(item.embedding);
      } catch (err) {
        throw toProviderError(err, options.apiKey, timeoutMs);
      }
    }
    return vectors;
  };
}
