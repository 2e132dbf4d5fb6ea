import { randomUUID } from 'node:crypto';
import type { ApiKeyScopes } from '@callpilot/contracts';
import type { Database } from '../src/db/client';
import { apiKeys } from '../src/db/schema';
import { generateApiKey } from '../src/modules/api-keys/api-key-secret';

/** Every resource at read-write (assistants read): a key that passes any scope check. */
export const ALL_SCOPES: ApiKeyScopes = {
  calls: 'write',
  tasks: 'write',
  contacts: 'write',
  records: 'write',
  assistants: 'read',
  knowledge: 'write',
  do_not_call: 'write',
  sms: 'write',
};

/** A stored key of `projectId` and its secret, as the console's 创建密钥 would leave it. */
export async function seedApiKey(
  db: Database,
  options: {
    projectId: string;
    scopes?: ApiKeyScopes;
    name?: string;
    expiresAt?: Date | null;
    ipAllowlist?: string[];
    rateLimitPerMinute?: number;
    createdBy?: string | null;
  },
): Promise<{ id: string; secret: string }> {
  const { secret, hash, last4 } = generateApiKey();
  const id = randomUUID();
  await db.insert(apiKeys).values({
    id,
    projectId: options.projectId,
    name: options.name ?? '测试密钥',
    keyHash: hash,
    last4,
    scopes: options.scopes ?? ALL_SCOPES,
    ipAllowlist: options.ipAllowlist ?? [],
    rateLimitPerMinute: options.rateLimitPerMinute ?? 600,
    expiresAt: options.expiresAt ?? null,
    createdBy: options.createdBy ?? null,
  });
  return { id, secret };
}

export const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
