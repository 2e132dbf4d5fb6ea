import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import {
  API_KEY_PREFIX,
  API_REQUEST_LOG_DAYS,
  type ApiKey,
  type ApiKeyCreated,
  type ApiKeyCreateRequest,
  type ApiKeyRequestLogEntry,
  type ApiKeyRequestLogQuery,
  type ApiKeyScopes,
  type ApiKeyStatus,
  type ApiKeyUpdateRequest,
  type Paged,
} from '@callpilot/contracts';
import { and, count, desc, eq, gte, isNull, lt, or } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { apiKeyRequests, apiKeys, users } from '../../db/schema';
import { AppError, badRequest, conflict, notFound } from '../../lib/errors';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import { generateApiKey } from './api-key-secret';

const DAY_MS = 24 * 3600_000;
/** Keys that stopped working this long ago are left out of the list (their log is gone too). */
export const STOPPED_KEYS_LISTED_DAYS = 30;
/** Usable (not revoked, not expired) keys a project may hold at once. */
export const MAX_USABLE_KEYS = 100;

export const apiKeyMessages = {
  manage: '仅项目所有者或管理员可以管理 API 密钥',
  notFound: 'API 密钥不存在',
  expiresInPast: '过期时间须晚于当前时间',
  revoked: '该 API 密钥已吊销，不能修改或轮换',
  expired: '该 API 密钥已过期，不能轮换，请创建新密钥',
  rolled: '该 API 密钥已轮换过，请轮换新密钥',
  tooMany: `每个项目最多 ${MAX_USABLE_KEYS} 个可用的 API 密钥，请先吊销不用的密钥`,
  allowlistEntry: (entry: string) =>
    `字段 ipAllowlist：「${entry}」不是有效的 IP 地址或 CIDR 网段（如 203.0.113.7、203.0.113.0/24、2001:db8::/32）`,
} as const;

export function requireKeyManager(project: ProjectAccess): void {
  requireManager(project, apiKeyMessages.manage);
}

type Row = typeof apiKeys.$inferSelect;
type RowWithCreator = Row & { creatorName: string | null };

export function keyStatus(row: Pick<Row, 'revokedAt' | 'expiresAt' | 'rolledToId'>, now: Date): ApiKeyStatus {
  if (row.revokedAt) return 'revoked';
  if (row.expiresAt && row.expiresAt.getTime() <= now.getTime()) return 'expired';
  if (row.rolledToId) return 'rolling';
  return 'active';
}

const toApiKey = (row: RowWithCreator, now: Date): ApiKey => ({
  id: row.id,
  name: row.name,
  maskedKey: `${API_KEY_PREFIX}••••${row.last4}`,
  last4: row.last4,
  scopes: row.scopes as ApiKeyScopes,
  ipAllowlist: row.ipAllowlist,
  rateLimitPerMinute: row.rateLimitPerMinute,
  status: keyStatus(row, now),
  expiresAt: row.expiresAt?.toISOString() ?? null,
  createdAt: row.createdAt.toISOString(),
  createdBy: row.createdBy && row.creatorName !== null ? { id: row.createdBy, name: row.creatorName } : null,
  lastUsedAt: row.lastUsedAt?.toISOString() ?? null,
  lastUsedIp: row.lastUsedIp,
  rolledToId: row.rolledToId,
  revokedAt: row.revokedAt?.toISOString() ?? null,
});

const withCreator = (db: Database) =>
  db
    .select({ key: apiKeys, creatorName: users.displayName })
    .from(apiKeys)
    .leftJoin(users, eq(users.id, apiKeys.createdBy));

async function loadKey(db: Database, projectId: string, keyId: string): Promise<RowWithCreator> {
  const [found] = await withCreator(db)
    .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId)))
    .limit(1);
  if (!found) throw notFound(apiKeyMessages.notFound);
  return { ...found.key, creatorName: found.creatorName };
}

/**
 * Each allowlist entry must be an address or a CIDR block with a prefix its family allows. The
 * contract's pattern only admits the characters; 300.1.1.1 or 10.0.0.0/33 are caught here, by name.
 */
export function checkAllowlist(entries: string[]): string[] {
  const seen = new Set<string>();
  for (const entry of entries) {
    const [address = '', bits, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk =
      bits === undefined ||
      (/^\d{1,3}$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32) && rest.length === 0);
    if (family === 0 || !prefixOk) throw badRequest(apiKeyMessages.allowlistEntry(entry));
    seen.add(entry);
  }
  return [...seen];
}

function checkExpiry(expiresAt: string | null, now: Date): Date | null {
  if (expiresAt === null) return null;
  const at = new Date(expiresAt);
  if (at.getTime() <= now.getTime())
    throw new AppError(400, 'VALIDATION_FAILED', apiKeyMessages.expiresInPast);
  return at;
}

/** Usable keys first, newest first; then expired, then revoked. Keys stopped long ago are left out. */
export async function listApiKeys(db: Database, projectId: string, now = new Date()): Promise<ApiKey[]> {
  const since = new Date(now.getTime() - STOPPED_KEYS_LISTED_DAYS * DAY_MS);
  const rows = await withCreator(db)
    .where(
      and(
        eq(apiKeys.projectId, projectId),
        or(isNull(apiKeys.revokedAt), gte(apiKeys.revokedAt, since)),
        or(isNull(apiKeys.expiresAt), gte(apiKeys.expiresAt, since)),
      ),
    )
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
  const rank: Record<ApiKeyStatus, number> = { active: 0, rolling: 0, expired: 1, revoked: 2 };
  return rows
    .map((r) => toApiKey({ ...r.key, creatorName: r.creatorName }, now))
    .sort((a, b) => rank[a.status] - rank[b.status]);
}

async function assertRoomForKey(db: Database, projectId: string, now: Date) {
  const [usable] = await db
    .select({ n: count() })
    .from(apiKeys)
    .where(
      and(
        eq(apiKeys.projectId, projectId),
        isNull(apiKeys.revokedAt),
        or(isNull(apiKeys.expiresAt), gte(apiKeys.expiresAt, now)),
      ),
    );
  if ((usable?.n ?? 0) >= MAX_USABLE_KEYS) throw conflict(apiKeyMessages.tooMany);
}

/** A new key; the answer is the only place its secret ever appears. */
export async function createApiKey(
  db: Database,
  projectId: string,
  userId: string,
  input: ApiKeyCreateRequest,
  now = new Date(),
): Promise<ApiKeyCreated> {
  const expiresAt = checkExpiry(input.expiresAt, now);
  const ipAllowlist = checkAllowlist(input.ipAllowlist);
  await assertRoomForKey(db, projectId, now);
  const { secret, hash, last4 } = generateApiKey();
  const id = randomUUID();
  await db.insert(apiKeys).values({
    id,
    projectId,
    name: input.name,
    keyHash: hash,
    last4,
    scopes: input.scopes,
    ipAllowlist,
    rateLimitPerMinute: input.rateLimitPerMinute,
    expiresAt,
    createdBy: userId,
    createdAt: now,
  });
  return { key: toApiKey(await loadKey(db, projectId, id), now), secret };
}

/** Name, scopes, allowlist and limit change in place; the caller announces the change (keyHash). */
export async function updateApiKey(
  db: Database,
  projectId: string,
  keyId: string,
  input: ApiKeyUpdateRequest,
  now = new Date(),
): Promise<{ key: ApiKey; keyHash: string }> {
  const row = await loadKey(db, projectId, keyId);
  if (row.revokedAt) throw conflict(apiKeyMessages.revoked);
  const changes: Partial<typeof apiKeys.$inferInsert> = {};
  if (input.name !== undefined) changes.name = input.name;
  if (input.scopes !== undefined) changes.scopes = input.scopes;
  if (input.ipAllowlist !== undefined) changes.ipAllowlist = checkAllowlist(input.ipAllowlist);
  if (input.rateLimitPerMinute !== undefined) changes.rateLimitPerMinute = input.rateLimitPerMinute;
  if (Object.keys(changes).length > 0) {
    await db
      .update(apiKeys)
      .set(changes)
      .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, keyId)));
  }
  return { key: toApiKey(await loadKey(db, projectId, keyId), now), keyHash: row.keyHash };
}

/**
 * A new secret for the same grants. The old key keeps working for the grace period (its expiry
 * moves to then, never later than it already was), so the customer can deploy the new one
 * without downtime; a grace of 0 revokes it at once.
 */
export async function rollApiKey(
  db: Database,
  projectId: string,
  keyId: string,
  userId: string,
  graceHours: number,
  now = new Date(),
): Promise<{ created: ApiKeyCreated; oldKeyHash: string }> {
  const old = await loadKey(db, projectId, keyId);
  const status = keyStatus(old, now);
  if (status === 'revoked') throw conflict(apiKeyMessages.revoked);
  if (status === 'expired') throw conflict(apiKeyMessages.expired);
  if (status === 'rolling') throw conflict(apiKeyMessages.rolled);
  const { secret, hash, last4 } = generateApiKey();
  const id = randomUUID();
  const graceEnd = new Date(now.getTime() + graceHours * 3600_000);
  await db.transaction(async (tx) => {
    await tx.insert(apiKeys).values({
      id,
      projectId,
      name: old.name,
      keyHash: hash,
      last4,
      scopes: old.scopes,
      ipAllowlist: old.ipAllowlist,
      rateLimitPerMinute: old.rateLimitPerMinute,
      expiresAt: old.expiresAt,
      createdBy: userId,
      createdAt: now,
    });
    // Only a key still as we read it is rolled: a concurrent roll or revoke wins, this one fails.
    const rolled = await tx
      .update(apiKeys)
      .set(
        graceHours === 0
          ? { rolledToId: id, revokedAt: now, revokedBy: userId }
          : {
              rolledToId: id,
              expiresAt: old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd,
            },
      )
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.rolledToId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id });
    if (rolled.length === 0) throw conflict(apiKeyMessages.rolled);
  });
  return {
    created: { key: toApiKey(await loadKey(db, projectId, id), now), secret },
    oldKeyHash: old.keyHash,
  };
}

/** Stops the key at once (the caller announces it to every process). Revoking twice is harmless. */
export async function revokeApiKey(
  db: Database,
  projectId: string,
  keyId: string,
  userId: string,
  now = new Date(),
): Promise<{ key: ApiKey; keyHash: string }> {
  const row = await loadKey(db, projectId, keyId);
  if (!row.revokedAt) {
    await db
      .update(apiKeys)
      .set({ revokedAt: now, revokedBy: userId })
      .where(and(eq(apiKeys.id, keyId), isNull(apiKeys.revokedAt)));
  }
  return { key: toApiKey(await loadKey(db, projectId, keyId), now), keyHash: row.keyHash };
}

/** The key's requests of the last 30 days, newest first. */
export async function listKeyRequests(
  db: Database,
  projectId: string,
  keyId: string,
  query: ApiKeyRequestLogQuery,
  now = new Date(),
): Promise<Paged<ApiKeyRequestLogEntry>> {
  await loadKey(db, projectId, keyId);
  const where = and(
    eq(apiKeyRequests.projectId, projectId),
    eq(apiKeyRequests.keyId, keyId),
    gte(apiKeyRequests.at, new Date(now.getTime() - API_REQUEST_LOG_DAYS * DAY_MS)),
    query.status === 'success' ? lt(apiKeyRequests.status, 400) : undefined,
    query.status === 'error' ? gte(apiKeyRequests.status, 400) : undefined,
  );
  const [total] = await db.select({ n: count() }).from(apiKeyRequests).where(where);
  const rows = await db
    .select()
    .from(apiKeyRequests)
    .where(where)
    .orderBy(desc(apiKeyRequests.at), desc(apiKeyRequests.id))
    .limit(query.pageSize)
    .offset((query.page - 1) * query.pageSize);
  return {
    items: rows.map((r) => ({
      id: r.id,
      at: r.at.toISOString(),
      method: r.method,
      path: r.path,
      status: r.status,
      latencyMs: r.latencyMs,
      ip: r.ip,
    })),
    total: total?.n ?? 0,
    page: query.page,
    pageSize: query.pageSize,
  };
}
