import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { smsSettings } from '../../db/schema';
import { type Clock, systemClock } from '../../engine/clock';
import type { Env } from '../../env';
import { loadAppSecret } from '../../lib/secret-box';
import type { SmsSender } from '../../providers';
import { createAliyunSmsClient } from './providers/aliyun-sms';
import { createOutboxSmsClient } from './providers/outbox';
import { createTencentSmsClient, TENCENT_SMS_BASE_URL } from './providers/tencent';
import type { SmsClientResolver, SmsEndpoint, SmsProviderClient } from './providers/types';
import { smsProviderCredentials } from './sms-settings';

export interface SmsClientResolverOptions {
  db: Database;
  env: Env;
  /** Where the development outbox lands (the process's SMS sender). */
  outbox: SmsSender;
  /** The vendors' endpoints; tests point them at the local fake servers. */
  endpoints?: { aliyun?: SmsEndpoint; tencent?: SmsEndpoint };
  /** Lets the endpoints be private addresses: only for the local fake servers of tests. */
  allowPrivate?: boolean;
  clock?: Clock;
}

/**
 * The client of each project's configured provider. The settings row's updated_at is read on every
 * resolve (one indexed lookup) and the client rebuilt when it changed, so a saved setting takes
 * effect on the next send in every process without a restart. A client is kept per project because
 * it holds the vendor's send pacer: rebuilding it per message would forget the rate it keeps.
 */
export function createSmsClientResolver(options: SmsClientResolverOptions): SmsClientResolver {
  const { db } = options;
  const secret = loadAppSecret(options.env);
  const clock = options.clock ?? systemClock;
  const outboxClient = createOutboxSmsClient(options.outbox);
  const cache = new Map<string, { version: string; client: SmsProviderClient }>();

  async function build(projectId: string): Promise<SmsProviderClient> {
    const resolved = await smsProviderCredentials(db, secret, projectId);
    if (resolved.provider === 'aliyun')
      return createAliyunSmsClient({
        credentials: resolved.credentials,
        endpoint: options.endpoints?.aliyun,
        allowPrivate: options.allowPrivate,
        now: () => clock.now(),
        qualificationId: resolved.qualificationId,
      });
    if (resolved.provider === 'tencent')
      return createTencentSmsClient({
        credentials: resolved.credentials,
        endpoint: options.endpoints?.tencent ?? { baseUrl: TENCENT_SMS_BASE_URL },
        allowPrivate: options.allowPrivate,
        clock,
      });
    return outboxClient;
  }

  return async (projectId) => {
    const [row] = await db
      .select({ provider: smsSettings.provider, updatedAt: smsSettings.updatedAt })
      .from(smsSettings)
      .where(eq(smsSettings.projectId, projectId))
      .limit(1);
    if (!row || row.provider === 'outbox') {
      cache.delete(projectId);
      return outboxClient;
    }
    const version = `${row.provider}@${row.updatedAt.getTime()}`;
    const cached = cache.get(projectId);
    if (cached?.version === version) return cached.client;
    const client = await build(projectId);
    cache.set(projectId, { version, client });
    return client;
  };
}
