import type {
  LlmProvider,
  LlmProviderTestResult,
  llmProviderWriteRequest,
  Paged,
  PageQuery,
} from '@callpilot/contracts';
import { and, asc, eq, ne } from 'drizzle-orm';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { llmProviders } from '../../db/schema';
import { createOpenAIClient, LLM_SERVICE } from '../../engine/brain/openai-client';
import type { AppSecret } from '../../lib/secret-box';
import {
  keyShown,
  type ProfileKind,
  profileStore,
  quote,
  testFailureMessage,
} from '../provider-profiles/provider-profiles';

type WriteInput = z.output<typeof llmProviderWriteRequest>;
type Row = typeof llmProviders.$inferSelect;

export const LLM_PROFILE: ProfileKind = { label: '模型配置', configSection: 'brain' };
const store = profileStore(llmProviders, LLM_PROFILE);

/** What a brain or embedder needs to reach the endpoint: the only place the key is decrypted. */
export interface ResolvedProvider {
  baseUrl: string;
  model: string;
  apiKey: string;
  embeddingModel: string;
}

function toDto(row: Row): LlmProvider {
  return {
    id: row.id,
    name: row.name,
    baseUrl: row.baseUrl,
    model: row.model,
    embeddingModel: row.embeddingModel,
    ...keyShown(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

const ownColumns = (input: WriteInput) => ({ model: input.model, embeddingModel: input.embeddingModel });

export async function listProviders(
  db: Database,
  projectId: string,
  page: PageQuery,
): Promise<Paged<LlmProvider>> {
  const found = await store.list(db, projectId, page);
  return { ...found, items: found.items.map(toDto) };
}

export async function getProvider(db: Database, projectId: string, providerId: string): Promise<LlmProvider> {
  return toDto(await store.get(db, projectId, providerId));
}

export async function createProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  input: WriteInput,
): Promise<LlmProvider> {
  return toDto(await store.create(db, secret, projectId, input, ownColumns(input)));
}

/** An omitted or empty apiKey keeps the stored one: the console never has it to send back. */
export async function updateProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string,
  input: WriteInput,
): Promise<LlmProvider> {
  return toDto(await store.update(db, secret, projectId, providerId, input, ownColumns(input)));
}

/** Refused while an assistant's brain uses it: its calls would silently drop to the script brain. */
export function deleteProvider(db: Database, projectId: string, providerId: string): Promise<void> {
  return store.remove(db, projectId, providerId);
}

const resolved = (secret: AppSecret, row: Row): ResolvedProvider => ({
  baseUrl: row.baseUrl,
  model: row.model,
  apiKey: store.openKey(secret, row),
  embeddingModel: row.embeddingModel,
});

/** The endpoint and decrypted key of one of the project's profiles; null when it does not exist. */
export async function resolveProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string,
): Promise<ResolvedProvider | null> {
  const row = await store.find(db, projectId, providerId);
  return row ? resolved(secret, row) : null;
}

/** The project's first profile (oldest) with an embeddings model, for hybrid retrieval; else null. */
export async function findEmbeddingProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
): Promise<ResolvedProvider | null> {
  const [row] = await db
    .select()
    .from(llmProviders)
    .where(and(eq(llmProviders.projectId, projectId), ne(llmProviders.embeddingModel, '')))
    .orderBy(asc(llmProviders.createdAt), asc(llmProviders.id))
    .limit(1);
  return row ? resolved(secret, row) : null;
}

/**
 * One tiny chat completion (and one embedding when an embeddings model is set) through the
 * stored profile. Failures are answers, not errors: the console shows what to check.
 */
export async function testProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string,
  options: { timeoutMs?: number; onUnexpected?: (err: unknown) => void } = {},
): Promise<LlmProviderTestResult> {
  const row = await store.get(db, projectId, providerId);
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let apiKey = '';
  try {
    apiKey = store.openKey(secret, row);
    const client = createOpenAIClient({ baseUrl: row.baseUrl, apiKey }, { timeoutMs: options.timeoutMs });
    const completion = await client.chat.completions.create({
      model: row.model,
      messages: [{ role: 'user', content: '你好，请只回复“连接成功”四个字。' }],
      max_tokens: 16,
      temperature: 0,
    });
    const latencyMs = elapsed();
    const reply = completion.choices[0]?.message?.content ?? '';
    let message = reply.trim() ? `连接成功，模型回复：「${quote(reply)}」` : '连接成功';
    if (row.embeddingModel) {
      const embedding = await client.embeddings.create({
        model: row.embeddingModel,
        input: ['连接测试'],
        encoding_format: 'float',
      });
      message += `；向量模型可用（${embedding.data[0]?.embedding.length ?? 0} 维）`;
    }
    return { ok: true, latencyMs, message };
  } catch (err) {
    return {
      ok: false,
      latencyMs: elapsed(),
      message: testFailureMessage(err, { apiKey, service: LLM_SERVICE, ...options }),
    };
  }
}
