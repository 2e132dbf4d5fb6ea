import type { SmsSettingsUpdateRequest, SmsSettingsView } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { smsSettings } from '../../db/schema';
import { badRequest } from '../../lib/errors';
import { type AppSecret, decryptSecret, encryptSecret } from '../../lib/secret-box';
import { type ProjectAccess, requireManager } from '../../plugins/project-access';
import type { AliyunCredentials, TencentCredentials } from './providers/types';

/** What the encrypted column holds, per provider (the key ids are kept in it too: one box). */
type StoredCredentials =
  | { provider: 'aliyun'; accessKeyId: string; accessKeySecret: string }
  | { provider: 'tencent'; secretId: string; secretKey: string };

type ProviderSettings = { sdkAppId?: string; region?: string; keyId?: string; qualificationId?: string };

/** Provider credentials are like trunk passwords: only the project's owner and admins handle them. */
export function assertCanManageSmsSettings(project: ProjectAccess): void {
  requireManager(project, '仅项目所有者或管理员可以设置短信服务商');
}

const DEFAULT_VIEW: SmsSettingsView = {
  provider: 'outbox',
  keyId: null,
  hasSecret: false,
  sdkAppId: null,
  region: null,
  qualificationId: null,
  dailyCapPerNumber: 5,
  updatedAt: null,
  pushUrls: null,
};

async function readRow(db: Database, projectId: string) {
  const [row] = await db.select().from(smsSettings).where(eq(smsSettings.projectId, projectId)).limit(1);
  return row;
}

export async function getSmsSettings(db: Database, projectId: string): Promise<SmsSettingsView> {
  const row = await readRow(db, projectId);
  if (!row) return DEFAULT_VIEW;
  const settings = row.providerSettings as ProviderSettings;
  return {
    provider: row.provider,
    keyId: settings.keyId ?? null,
    hasSecret: row.credentialsEncrypted !== '',
    sdkAppId: settings.sdkAppId ?? null,
    region: settings.region ?? null,
    qualificationId: settings.qualificationId ?? null,
    dailyCapPerNumber: row.dailyCapPerNumber,
    updatedAt: row.updatedAt.toISOString(),
    // Built by the route, which knows the address the vendor reaches this server at.
    pushUrls: null,
  };
}

function stored(secret: AppSecret, box: string): StoredCredentials | null {
  if (!box) return null;
  return JSON.parse(decryptSecret(secret, box)) as StoredCredentials;
}

/**
 * Saves the provider. A secret left out keeps the stored one, but only for the same provider and
 * key id: a new key id with the old key's secret would never sign.
 */
export async function saveSmsSettings(
  db: Database,
  secret: AppSecret,
  projectId: string,
  input: SmsSettingsUpdateRequest,
  now: number,
): Promise<SmsSettingsView> {
  const row = await readRow(db, projectId);
  const previous = row ? stored(secret, row.credentialsEncrypted) : null;
  let credentials: StoredCredentials | null = null;
  let settings: ProviderSettings = {};
  if (input.provider === 'aliyun') {
    const kept =
      previous?.provider === 'aliyun' && previous.accessKeyId === input.accessKeyId
        ? previous.accessKeySecret
        : null;
    const accessKeySecret = input.accessKeySecret ?? kept;
    if (!accessKeySecret) throw badRequest('字段 accessKeySecret：请输入 AccessKey Secret');
    credentials = { provider: 'aliyun', accessKeyId: input.accessKeyId, accessKeySecret };
    settings = {
      keyId: input.accessKeyId,
      ...(input.qualificationId ? { qualificationId: input.qualificationId } : {}),
    };
  } else if (input.provider === 'tencent') {
    const kept =
      previous?.provider === 'tencent' && previous.secretId === input.secretId ? previous.secretKey : null;
    const secretKey = input.secretKey ?? kept;
    if (!secretKey) throw badRequest('字段 secretKey：请输入 SecretKey');
    credentials = { provider: 'tencent', secretId: input.secretId, secretKey };
    settings = { keyId: input.secretId, sdkAppId: input.sdkAppId, region: input.region };
  }
  const values = {
    provider: input.provider,
    credentialsEncrypted: credentials ? encryptSecret(secret, JSON.stringify(credentials)) : '',
    providerSettings: settings,
    dailyCapPerNumber: input.dailyCapPerNumber,
    updatedAt: new Date(now),
  };
  await db
    .insert(smsSettings)
    .values({ projectId, ...values })
    .onConflictDoUpdate({ target: smsSettings.projectId, set: values });
  return getSmsSettings(db, projectId);
}

/** The decrypted credentials for the provider clients (never for a response). */
export async function smsProviderCredentials(
  db: Database,
  secret: AppSecret,
  projectId: string,
): Promise<
  | { provider: 'outbox' }
  | { provider: 'aliyun'; credentials: AliyunCredentials; qualificationId?: number }
  | { provider: 'tencent'; credentials: TencentCredentials }
> {
  const row = await readRow(db, projectId);
  const creds = row ? stored(secret, row.credentialsEncrypted) : null;
  if (!row || row.provider === 'outbox' || !creds) return { provider: 'outbox' };
  const settings = row.providerSettings as ProviderSettings;
  if (creds.provider === 'aliyun')
    return {
      provider: 'aliyun',
      credentials: { accessKeyId: creds.accessKeyId, accessKeySecret: creds.accessKeySecret },
      ...(settings.qualificationId ? { qualificationId: Number(settings.qualificationId) } : {}),
    };
  return {
    provider: 'tencent',
    credentials: {
      secretId: creds.secretId,
      secretKey: creds.secretKey,
      sdkAppId: settings.sdkAppId ?? '',
      region: settings.region ?? '',
    },
  };
}
