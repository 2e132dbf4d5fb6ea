import { randomUUID } from 'node:crypto';
import type {
  LlmProvider,
  LlmProviderTestResult,
  llmProviderWriteRequest,
  Paged,
  PageQuery,
} from '@callpilot/contracts';
import { and, asc, count, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { z } from 'zod';
import type { Database } from '../../db/client';
import { assistants, assistantVersions, llmProviders } from '../../db/schema';
import { createOpenAIClient, ProviderError, toProviderError } from '../../engine/brain/openai-client';
import { AppError, conflict, notFound } from '../../lib/errors';
import { type AppSecret, decryptSecret, encryptSecret, SecretBoxError } from '../../lib/secret-box';

type WriteInput = z.output<typeof llmProviderWriteRequest>;
type Row = typeof llmProviders.$inferSelect;

/** Enough for every vendor a project might try side by side; more is a sign of a script gone wrong. */
export const MAX_PROVIDERS_PER_PROJECT = 20;

/** What a brain or embedder needs to reach the endpoint: the only place the key is decrypted. */
export interface ResolvedProvider {
  baseUrl: string;
  model: string;
  apiKey: string;
  embeddingModel: string;
}

const providerNotFound = () => notFound('模型配置不存在');

/** Short keys would be given away by their last four characters, so they get no hint. */
const hintFor = (apiKey: string) => (apiKey.length >= 8 ? apiKey.slice(-4) : '');

/** `https://api.deepseek.com/v1/` and `.../v1` are the same endpoint; store one spelling. */
const normaliseBaseUrl = (url: string) => url.trim().replace(/\/+$/, '');

function toDto(row: Row): LlmProvider {
  return {
    id: row.id,
    name: row.name,
    baseUrl: row.baseUrl,
    model: row.model,
    embeddingModel: row.embeddingModel,
    hasApiKey: row.apiKeyEncrypted !== '',
    apiKeyHint: row.apiKeyHint,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

async function findRow(db: Database, projectId: string, providerId: string): Promise<Row | undefined> {
  const [row] = await db
    .select()
    .from(llmProviders)
    .where(and(eq(llmProviders.projectId, projectId), eq(llmProviders.id, providerId)))
    .limit(1);
  return row;
}

async function assertNameFree(db: Database, projectId: string, name: string, exceptId?: string) {
  const [taken] = await db
    .select({ id: llmProviders.id })
    .from(llmProviders)
    .where(
      and(
        eq(llmProviders.projectId, projectId),
        eq(llmProviders.name, name),
        exceptId ? ne(llmProviders.id, exceptId) : undefined,
      ),
    )
    .limit(1);
  if (taken) throw conflict(`已存在同名的模型配置「${name}」`);
}

export async function listProviders(
  db: Database,
  projectId: string,
  { page, pageSize }: PageQuery,
): Promise<Paged<LlmProvider>> {
  const where = eq(llmProviders.projectId, projectId);
  const [rows, [total]] = await Promise.all([
    db
      .select()
      .from(llmProviders)
      .where(where)
      .orderBy(asc(llmProviders.createdAt), asc(llmProviders.id))
      .limit(pageSize)
      .offset((page - 1) * pageSize),
    db.select({ n: count() }).from(llmProviders).where(where),
  ]);
  return { items: rows.map(toDto), total: total?.n ?? 0, page, pageSize };
}

export async function getProvider(db: Database, projectId: string, providerId: string): Promise<LlmProvider> {
  const row = await findRow(db, projectId, providerId);
  if (!row) throw providerNotFound();
  return toDto(row);
}

export async function createProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  input: WriteInput,
): Promise<LlmProvider> {
  const [existing] = await db
    .select({ n: count() })
    .from(llmProviders)
    .where(eq(llmProviders.projectId, projectId));
  if ((existing?.n ?? 0) >= MAX_PROVIDERS_PER_PROJECT) {
    throw conflict(`每个项目最多 ${MAX_PROVIDERS_PER_PROJECT} 个模型配置，请先删除不用的配置`);
  }
  await assertNameFree(db, projectId, input.name);
  const apiKey = input.apiKey ?? '';
  const [row] = await db
    .insert(llmProviders)
    .values({
      id: randomUUID(),
      projectId,
      name: input.name,
      baseUrl: normaliseBaseUrl(input.baseUrl),
      model: input.model,
      embeddingModel: input.embeddingModel,
      apiKeyEncrypted: apiKey ? encryptSecret(secret, apiKey) : '',
      apiKeyHint: hintFor(apiKey),
    })
    .returning();
  return toDto(row!);
}

/** An omitted or empty apiKey keeps the stored one: the console never has it to send back. */
export async function updateProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string,
  input: WriteInput,
): Promise<LlmProvider> {
  if (!(await findRow(db, projectId, providerId))) throw providerNotFound();
  await assertNameFree(db, projectId, input.name, providerId);
  const apiKey = input.apiKey ?? '';
  const key = apiKey
    ? { apiKeyEncrypted: encryptSecret(secret, apiKey), apiKeyHint: hintFor(apiKey) }
    : input.clearApiKey
      ? { apiKeyEncrypted: '', apiKeyHint: '' }
      : {};
  const [row] = await db
    .update(llmProviders)
    .set({
      name: input.name,
      baseUrl: normaliseBaseUrl(input.baseUrl),
      model: input.model,
      embeddingModel: input.embeddingModel,
      ...key,
      updatedAt: new Date(),
    })
    .where(and(eq(llmProviders.projectId, projectId), eq(llmProviders.id, providerId)))
    .returning();
  if (!row) throw providerNotFound();
  return toDto(row);
}

/**
 * Names of live assistants whose draft, or whose published version (what calls run), uses the
 * profile. Deleting it from under them would silently drop those calls to the script brain.
 */
async function assistantsUsing(db: Database, projectId: string, providerId: string): Promise<string[]> {
  const rows = await db
    .select({ name: assistants.name })
    .from(assistants)
    .leftJoin(
      assistantVersions,
      and(
        eq(assistantVersions.assistantId, assistants.id),
        eq(assistantVersions.version, assistants.publishedVersion),
      ),
    )
    .where(
      and(
        eq(assistants.projectId, projectId),
        isNull(assistants.deletedAt),
        or(
          sql`${assistants.config}->'brain'->>'providerId' = ${providerId}`,
          sql`${assistantVersions.config}->'brain'->>'providerId' = ${providerId}`,
        ),
      ),
    )
    .orderBy(asc(assistants.name))
    .limit(4);
  return rows.map((r) => r.name);
}

export async function deleteProvider(db: Database, projectId: string, providerId: string): Promise<void> {
  if (!(await findRow(db, projectId, providerId))) throw providerNotFound();
  const users = await assistantsUsing(db, projectId, providerId);
  if (users.length > 0) {
    const names = users
      .slice(0, 3)
      .map((name) => `「${name}」`)
      .join('');
    const more = users.length > 3 ? '等' : '';
    throw conflict(`该模型配置正被小助手${names}${more}使用，请先在小助手中改用其他模型配置后再删除`);
  }
  await db
    .delete(llmProviders)
    .where(and(eq(llmProviders.projectId, projectId), eq(llmProviders.id, providerId)));
}

function decryptedKey(secret: AppSecret, row: Row): string {
  if (!row.apiKeyEncrypted) return '';
  try {
    return decryptSecret(secret, row.apiKeyEncrypted);
  } catch (err) {
    if (!(err instanceof SecretBoxError)) throw err;
    // Only a changed APP_SECRET (or a lost DATA_DIR/app-secret) gets here; the user can fix it.
    throw new AppError(
      409,
      'CONFLICT',
      `模型配置「${row.name}」的 API Key 无法解密（服务器密钥已更换），请重新填写 API Key`,
    );
  }
}

const resolved = (secret: AppSecret, row: Row): ResolvedProvider => ({
  baseUrl: row.baseUrl,
  model: row.model,
  apiKey: decryptedKey(secret, row),
  embeddingModel: row.embeddingModel,
});

/** The endpoint and decrypted key of one of the project's profiles; null when it does not exist. */
export async function resolveProvider(
  db: Database,
  secret: AppSecret,
  projectId: string,
  providerId: string,
): Promise<ResolvedProvider | null> {
  const row = await findRow(db, projectId, providerId);
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

const quote = (text: string, max = 60) => {
  const chars = [...text.trim().replace(/\s+/g, ' ')];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
};

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
  const row = await findRow(db, projectId, providerId);
  if (!row) throw providerNotFound();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let apiKey = '';
  try {
    apiKey = decryptedKey(secret, row);
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
    const mapped = toProviderError(err, apiKey, options.timeoutMs);
    if (mapped instanceof ProviderError || mapped instanceof AppError) {
      return { ok: false, latencyMs: elapsed(), message: mapped.message };
    }
    options.onUnexpected?.(err);
    return {
      ok: false,
      latencyMs: elapsed(),
      message: '测试失败：模型服务的应答无法识别，请确认接口地址与模型名称',
    };
  }
}
