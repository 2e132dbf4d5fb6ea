import { BlockList, isIP } from 'node:net';
import type { ApiKeyScopes } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database, DatabaseHandle } from '../../db/client';
import { apiKeys, projects } from '../../db/schema';
import type { ApiKeyResolver, ResolvedApiKey } from '../../plugins/api-key-auth';

/** Revocations, rolls and edits of a key travel on this channel; the payload is the key's hash. */
export const API_KEY_CHANGED_CHANNEL = 'api_key_changed';

/**
 * Key lookups for the open API, cached per process: every request makes one, and a key changes
 * rarely. A revoke (or any edit) notifies every process, which drops its copy at once; the TTL
 * only bounds what a missed notification could leave.
 */
export class CachedApiKeyResolver implements ApiKeyResolver {
  private readonly entries = new Map<string, { key: ResolvedApiKey | null; until: number }>();
  private readonly allowlists = new WeakMap<ResolvedApiKey, BlockList>();
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly db: Database,
    private readonly ttlMs = 30_000,
    private readonly maxEntries = 10_000,
  ) {}

  async start(database: Pick<DatabaseHandle, 'listen'>): Promise<void> {
    this.unlisten = await database.listen(API_KEY_CHANGED_CHANNEL, (hash) => this.evict(hash));
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.entries.clear();
  }

  evict(keyHash: string): void {
    this.entries.delete(keyHash);
  }

  async resolve(keyHash: string): Promise<ResolvedApiKey | null> {
    const now = Date.now();
    const hit = this.entries.get(keyHash);
    if (hit && hit.until > now) return hit.key;
    const [row] = await this.db
      .select({
        id: apiKeys.id,
        projectId: apiKeys.projectId,
        name: apiKeys.name,
        scopes: apiKeys.scopes,
        rateLimitPerMinute: apiKeys.rateLimitPerMinute,
        ipAllowlist: apiKeys.ipAllowlist,
        expiresAt: apiKeys.expiresAt,
        revokedAt: apiKeys.revokedAt,
        projectDisabled: projects.disabled,
      })
      .from(apiKeys)
      .innerJoin(projects, eq(projects.id, apiKeys.projectId))
      .where(eq(apiKeys.keyHash, keyHash))
      .limit(1);
    const key: ResolvedApiKey | null = row ? { ...row, scopes: row.scopes as ApiKeyScopes } : null;
    if (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(keyHash, { key, until: now + this.ttlMs });
    return key;
  }

  ipAllowed(key: ResolvedApiKey, ip: string): boolean {
    if (key.ipAllowlist.length === 0) return true;
    let list = this.allowlists.get(key);
    if (!list) {
      list = allowlist(key.ipAllowlist);
      this.allowlists.set(key, list);
    }
    const address = ip.startsWith('::ffff:') && isIP(ip.slice(7)) === 4 ? ip.slice(7) : ip;
    const family = isIP(address);
    return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
  }
}

/** A BlockList of an allowlist's addresses and CIDR blocks (entries are validated on write). */
export function allowlist(entries: string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}
