import { randomUUID } from 'node:crypto';
import type { Paged, PageQuery } from '@callpilot/contracts';
import { and, asc, count, eq, isNull, ne, or, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import {
  assistants,
  assistantVersions,
  type llmProviders,
  type speechProviders,
  type synthesisProviders,
} from '../../db/schema';
import { ProviderError, type ProviderService, toProviderError } from '../../engine/brain/openai-client';
import { AppError, conflict, notFound } from '../../lib/errors';
import { type AppSecret, decryptSecret, encryptSecret, SecretBoxError } from '../../lib/secret-box';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';

/**
 * What the project's provider profiles (模型配置, 语音识别配置, 语音合成配置) share: an endpoint with a key
 * sealed at rest and shown only as "已填写 + last 4", one name per project, a cap per project,
 * no deleting while an assistant uses one, and a test whose failure is an answer. Each module
 * keeps only what is its own (its columns, its DTO, what its test sends).
 */

/** Tables with the profile columns (id, project, name, base URL, model, sealed key, timestamps). */
export type ProfileTable = typeof llmProviders | typeof speechProviders | typeof synthesisProviders;

/** How a profile kind is named in messages, and where an assistant's config points at one. */
export interface ProfileKind {
  /** 模型配置, 语音识别配置, 语音合成配置 */
  label: string;
  /** The assistant config section that names a profile of this kind... */
  configSection: 'brain' | 'hearing' | 'voice';
  /** ...in this field of it (default providerId; a voice names its profile as `provider`). */
  configField?: 'providerId' | 'provider';
}

/** Enough for every vendor a project might try side by side; more is a sign of a script gone wrong. */
export const MAX_PROFILES_PER_PROJECT = 20;

/** Profiles hold paid keys and decide how calls run: only the project's owner and admins change them. */
export function assertCanManage(project: ProjectAccess, kind: ProfileKind): void {
  requireManager(project, `仅项目所有者或管理员可以管理${kind.label}`);
}

/** Short keys would be given away by their last four characters, so they get no hint. */
const hintFor = (apiKey: string) => (apiKey.length >= 8 ? apiKey.slice(-4) : '');

/** `https://api.deepseek.com/v1/` and `.../v1` are the same endpoint; store one spelling. */
const normaliseBaseUrl = (url: string) => url.trim().replace(/\/+$/, '');

/** The key columns: sealed, with the hint the console may show. */
const sealedKey = (secret: AppSecret, apiKey = '') => ({
  apiKeyEncrypted: apiKey ? encryptSecret(secret, apiKey) : '',
  apiKeyHint: hintFor(apiKey),
});

/** What the console may see of a stored key. */
export const keyShown = (row: { apiKeyEncrypted: string; apiKeyHint: string }) => ({
  hasApiKey: row.apiKeyEncrypted !== '',
  apiKeyHint: row.apiKeyHint,
});

/** The fields every profile write carries; the rest are the table's own columns. */
export interface ProfileWrite {
  name: string;
  baseUrl: string;
  apiKey?: string | undefined;
  clearApiKey?: boolean | undefined;
}

type Row<T extends ProfileTable> = T['$inferSelect'];
type OwnColumns<T extends ProfileTable> = Omit<
  T['$inferInsert'],
  'id' | 'projectId' | 'name' | 'baseUrl' | 'apiKeyEncrypted' | 'apiKeyHint' | 'createdAt' | 'updatedAt'
>;

/** One kind of profile over its table: the only code that reads, writes or opens its rows. */
export function profileStore<T extends ProfileTable>(table: T, kind: ProfileKind) {
  // Drizzle cannot type a query over "one of two tables" generically; the columns used are common.
  const any = table as ProfileTable;
  const ofProject = (projectId: string, id: string) => and(eq(any.projectId, projectId), eq(any.id, id));
  const missing = () => notFound(`${kind.label}不存在`);

  async function find(db: Database, projectId: string, id: string): Promise<Row<T> | undefined> {
    const [row] = await db.select().from(any).where(ofProject(projectId, id)).limit(1);
    return row as Row<T> | undefined;
  }

  async function get(db: Database, projectId: string, id: string): Promise<Row<T>> {
    const row = await find(db, projectId, id);
    if (!row) throw missing();
    return row;
  }

  async function assertNameFree(db: Database, projectId: string, name: string, exceptId?: string) {
    const [taken] = await db
      .select({ id: any.id })
      .from(any)
      .where(
        and(eq(any.projectId, projectId), eq(any.name, name), exceptId ? ne(any.id, exceptId) : undefined),
      )
      .limit(1);
    if (taken) throw conflict(`已存在同名的${kind.label}「${name}」`);
  }

  /**
   * Names of live assistants whose draft, or whose published version (what calls run), uses the
   * profile. Deleting it from under them would silently change how their calls run.
   */
  async function assistantsUsing(db: Database, projectId: string, id: string): Promise<string[]> {
    const field = kind.configField ?? 'providerId';
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
            sql`${assistants.config}->${kind.configSection}::text->>${field}::text = ${id}`,
            sql`${assistantVersions.config}->${kind.configSection}::text->>${field}::text = ${id}`,
          ),
        ),
      )
      .orderBy(asc(assistants.name))
      .limit(4);
    return rows.map((r) => r.name);
  }

  return {
    find,
    get,

    async list(db: Database, projectId: string, { page, pageSize }: PageQuery): Promise<Paged<Row<T>>> {
      const where = eq(any.projectId, projectId);
      const [rows, [total]] = await Promise.all([
        db
          .select()
          .from(any)
          .where(where)
          .orderBy(asc(any.createdAt), asc(any.id))
          .limit(pageSize)
          .offset((page - 1) * pageSize),
        db.select({ n: count() }).from(any).where(where),
      ]);
      return { items: rows as Row<T>[], total: total?.n ?? 0, page, pageSize };
    },

    async create(
      db: Database,
      secret: AppSecret,
      projectId: string,
      input: ProfileWrite,
      own: OwnColumns<T>,
    ): Promise<Row<T>> {
      const [existing] = await db.select({ n: count() }).from(any).where(eq(any.projectId, projectId));
      if ((existing?.n ?? 0) >= MAX_PROFILES_PER_PROJECT) {
        throw conflict(`每个项目最多 ${MAX_PROFILES_PER_PROJECT} 个${kind.label}，请先删除不用的配置`);
      }
      await assertNameFree(db, projectId, input.name);
      const values = {
        ...own,
        id: randomUUID(),
        projectId,
        name: input.name,
        baseUrl: normaliseBaseUrl(input.baseUrl),
        ...sealedKey(secret, input.apiKey),
      };
      const [row] = await db
        .insert(any)
        .values(values as T['$inferInsert'] & typeof values)
        .returning();
      return row as Row<T>;
    },

    /** An omitted or empty apiKey keeps the stored one: the console never has it to send back. */
    async update(
      db: Database,
      secret: AppSecret,
      projectId: string,
      id: string,
      input: ProfileWrite,
      own: OwnColumns<T>,
    ): Promise<Row<T>> {
      await get(db, projectId, id);
      await assertNameFree(db, projectId, input.name, id);
      const key = input.apiKey ? sealedKey(secret, input.apiKey) : input.clearApiKey ? sealedKey(secret) : {};
      const [row] = await db
        .update(any)
        .set({
          ...own,
          name: input.name,
          baseUrl: normaliseBaseUrl(input.baseUrl),
          ...key,
          updatedAt: new Date(),
        })
        .where(ofProject(projectId, id))
        .returning();
      if (!row) throw missing();
      return row as Row<T>;
    },

    /**
     * Refused (409, naming up to three) while an assistant's draft or live version uses it, or
     * while `otherUse` (the project's speech settings, a cloned voice) names a reason.
     */
    async remove(
      db: Database,
      projectId: string,
      id: string,
      otherUse?: () => Promise<string | null>,
    ): Promise<void> {
      await get(db, projectId, id);
      const users = await assistantsUsing(db, projectId, id);
      if (users.length > 0) {
        const names = users
          .slice(0, 3)
          .map((name) => `「${name}」`)
          .join('');
        const more = users.length > 3 ? '等' : '';
        throw conflict(
          `该${kind.label}正被小助手${names}${more}使用，请先在小助手中改用其他${kind.label}后再删除`,
        );
      }
      const refusal = await otherUse?.();
      if (refusal) throw conflict(refusal);
      await db.delete(any).where(ofProject(projectId, id));
    },

    /** The decrypted key: the one place a profile's key is opened. */
    openKey(secret: AppSecret, row: { name: string; apiKeyEncrypted: string }): string {
      if (!row.apiKeyEncrypted) return '';
      try {
        return decryptSecret(secret, row.apiKeyEncrypted);
      } catch (err) {
        if (!(err instanceof SecretBoxError)) throw err;
        // Only a changed APP_SECRET (or a lost DATA_DIR/app-secret) gets here; the user can fix it.
        throw new AppError(
          409,
          'CONFLICT',
          `${kind.label}「${row.name}」的 API Key 无法解密（服务器密钥已更换），请重新填写 API Key`,
        );
      }
    },
  };
}

/** A provider's words, on one line and cut short, for a test result. */
export const quote = (text: string, max = 60) => {
  const chars = [...text.trim().replace(/\s+/g, ' ')];
  return chars.length > max ? `${chars.slice(0, max).join('')}…` : chars.join('');
};

/**
 * Why a profile test failed, as the console shows it. Failures are answers, not errors; one the
 * mapping does not know is reported to `onUnexpected` (for the log, by name only).
 */
export function testFailureMessage(
  err: unknown,
  context: {
    apiKey: string;
    timeoutMs?: number;
    service: ProviderService;
    onUnexpected?: (err: unknown) => void;
  },
): string {
  const mapped = toProviderError(err, context.apiKey, context.timeoutMs, context.service);
  if (mapped instanceof ProviderError || mapped instanceof AppError) return mapped.message;
  context.onUnexpected?.(err);
  return `测试失败：${context.service.name}的应答无法识别，请确认接口地址与模型名称`;
}
