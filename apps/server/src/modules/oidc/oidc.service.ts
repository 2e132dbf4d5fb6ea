import { randomBytes, randomUUID } from 'node:crypto';
import { and, eq, lt } from 'drizzle-orm';
import * as oidc from 'openid-client';
import type { Database } from '../../db/client';
import { oidcLogins, userIdentities, users } from '../../db/schema';
import type { Env } from '../../env';
import { AppError, badRequest, forbidden } from '../../lib/errors';
import { recordAudit } from '../audit/audit.service';
import { hashPassword } from '../auth/password';
import { createSession } from '../auth/sessions.service';
import { describeDevice } from '../auth/user-agent';

export const OIDC_LOGIN_TTL_MS = 10 * 60 * 1000;
export const DEFAULT_REDIRECT = '/dashboard';
export const OIDC_SCOPE = 'openid email profile';
// Seconds, per openid-client; a provider that hangs must not hold a login request for its default 30 s.
const PROVIDER_TIMEOUT_S = 10;
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

export interface OidcSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  name: string;
}

/** The three OIDC_* variables are set together or not at all (env.ts enforces it). */
export function oidcSettings(env: Env): OidcSettings | null {
  if (!env.OIDC_ISSUER || !env.OIDC_CLIENT_ID || !env.OIDC_CLIENT_SECRET) return null;
  return {
    issuer: env.OIDC_ISSUER,
    clientId: env.OIDC_CLIENT_ID,
    clientSecret: env.OIDC_CLIENT_SECRET,
    name: env.OIDC_NAME,
  };
}

/**
 * Where to send the user after login: only a path on this site. `//host` and `/\host` are
 * read by browsers as another host, so they fall back like any absolute URL does.
 */
export function safeRedirect(value: string | undefined): string {
  if (!value || value.length > 2048 || !value.startsWith('/')) return DEFAULT_REDIRECT;
  if (value.startsWith('//') || value.includes('\\')) return DEFAULT_REDIRECT;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) return DEFAULT_REDIRECT;
  return value;
}

export const providerFailed = (reason: string) =>
  new AppError(502, 'UPSTREAM_FAILED', `第三方登录失败：${reason}`);

/**
 * Turns anything the provider or the network threw into a 502 the user can read. Only the
 * OAuth error code travels to the caller (it is from a fixed vocabulary and carries no
 * secret); descriptions and bodies stay out of the answer.
 */
export function toProviderError(err: unknown, log?: ProviderLog): AppError {
  if (err instanceof AppError) return err;
  // For the operator: what failed, without bodies that might echo request data.
  log?.warn(
    {
      code: (err as { code?: unknown })?.code,
      error: (err as { error?: unknown })?.error,
      message: String(err),
    },
    'OpenID provider request failed',
  );
  if (err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError) {
    const code = /^[\w.-]{1,64}$/.test(err.error) ? err.error : '认证服务拒绝了请求';
    return providerFailed(code);
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code.startsWith('OAUTH_'))
    return providerFailed('认证服务的应答未通过校验');
  return providerFailed('无法连接认证服务');
}

export interface ProviderLog {
  warn(details: object, message: string): void;
}

/** Discovery and the client configuration, fetched once per process and reused by every login. */
export interface OidcClient {
  readonly settings: OidcSettings;
  readonly log: ProviderLog | undefined;
  configuration(): Promise<oidc.Configuration>;
}

export function createOidcClient(settings: OidcSettings, log?: ProviderLog): OidcClient {
  let pending: Promise<oidc.Configuration> | undefined;
  const discover = async () => {
    const issuer = new URL(settings.issuer);
    // openid-client refuses plain-HTTP providers, rightly: codes and tokens would cross the
    // network in clear. A provider on this machine's loopback never leaves the host, which is
    // how development and the tests run one, so HTTP is allowed for that case only.
    const insecure = issuer.protocol === 'http:' && LOOPBACK_HOSTS.has(issuer.hostname);
    const config = await oidc.discovery(
      issuer,
      settings.clientId,
      undefined,
      // client_secret_basic is the default every OpenID provider must support for confidential clients.
      oidc.ClientSecretBasic(settings.clientSecret),
      { execute: insecure ? [oidc.allowInsecureRequests] : [], timeout: PROVIDER_TIMEOUT_S },
    );
    config.timeout = PROVIDER_TIMEOUT_S;
    return config;
  };
  return {
    settings,
    log,
    configuration() {
      // A failed discovery is not cached, so the next login retries once the provider is back.
      pending ??= discover().catch((err) => {
        pending = undefined;
        throw err;
      });
      return pending;
    },
  };
}

/** Starts a login: remembers state → verifier, nonce and destination, and returns the provider's URL. */
export async function startOidcLogin(
  db: Database,
  client: OidcClient,
  input: { redirectUri: string; redirect: string | undefined },
  now = new Date(),
) {
  let config: oidc.Configuration;
  try {
    config = await client.configuration();
  } catch (err) {
    throw toProviderError(err, client.log);
  }
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  // Abandoned logins are swept here, on the path that creates them, so the table stays small.
  await db.delete(oidcLogins).where(lt(oidcLogins.expiresAt, now));
  await db.insert(oidcLogins).values({
    state,
    codeVerifier,
    nonce,
    redirect: safeRedirect(input.redirect),
    createdAt: now,
    expiresAt: new Date(now.getTime() + OIDC_LOGIN_TTL_MS),
  });
  const authorizationUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: input.redirectUri,
    scope: OIDC_SCOPE,
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { authorizationUrl: authorizationUrl.href };
}

interface Claims {
  iss: string;
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  name?: unknown;
}

const hostOf = (issuer: string) => {
  try {
    return new URL(issuer).host;
  } catch {
    return issuer;
  }
};

/** Finishes a login: one use of the state, code exchange, then the user linked to the identity. */
export async function completeOidcLogin(
  db: Database,
  client: OidcClient,
  input: { code: string; state: string; iss?: string | undefined; redirectUri: string },
  meta: { userAgent: string; ip: string },
  now = new Date(),
) {
  // Deleting and reading in one statement makes the state single-use even under concurrent callbacks.
  const [login] = await db.delete(oidcLogins).where(eq(oidcLogins.state, input.state)).returning();
  if (!login || login.expiresAt.getTime() <= now.getTime()) {
    throw badRequest('登录请求已过期，请重新发起第三方登录');
  }

  let claims: Claims;
  let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
  let config: oidc.Configuration;
  try {
    config = await client.configuration();
    const callbackUrl = new URL(input.redirectUri);
    callbackUrl.searchParams.set('code', input.code);
    callbackUrl.searchParams.set('state', input.state);
    // With one configured provider there is no mix-up to defend against (RFC 9207), so when
    // the page did not pass `iss` along we vouch for our own issuer, which the provider
    // would otherwise require whenever it advertises the parameter.
    callbackUrl.searchParams.set('iss', input.iss ?? config.serverMetadata().issuer);
    tokens = await oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: login.codeVerifier,
      expectedNonce: login.nonce,
      expectedState: login.state,
      idTokenExpected: true,
    });
    claims = tokens.claims() as Claims;
  } catch (err) {
    throw toProviderError(err, client.log);
  }

  const [linked] = await db
    .select({ userId: userIdentities.userId })
    .from(userIdentities)
    .where(and(eq(userIdentities.issuer, claims.iss), eq(userIdentities.subject, claims.sub)))
    .limit(1);
  let userId = linked?.userId;
  if (!userId) {
    // Many providers put e-mail and name only in the UserInfo answer, not in the ID token.
    if (claims.email === undefined || claims.email_verified === undefined) {
      if (config.serverMetadata().userinfo_endpoint) {
        try {
          const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
          claims = {
            ...claims,
            email: claims.email ?? info.email,
            email_verified: claims.email_verified ?? info.email_verified,
            name: claims.name ?? info.name,
          };
        } catch (err) {
          throw toProviderError(err, client.log);
        }
      }
    }
    userId = await linkIdentity(db, claims, now);
  }

  const signedIn = userId;
  const session = await db.transaction(async (tx) => {
    const created = await createSession(tx, signedIn, meta, now);
    const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, signedIn)).limit(1);
    await recordAudit(tx, {
      projectId: null,
      userId: signedIn,
      actor: user?.email ?? '',
      action: 'auth.login',
      summary: `单点登录（${hostOf(claims.iss)}），${describeDevice(meta.userAgent)}`,
      ip: meta.ip,
    });
    return created;
  });
  return { token: session.token, expiresAt: session.expiresAt.toISOString(), redirect: login.redirect };
}

/**
 * Links a first-time identity to the account with the same verified e-mail, creating the
 * account (without a project: the console asks for one next) when there is none.
 */
async function linkIdentity(db: Database, claims: Claims, now: Date): Promise<string> {
  // An unverified address could belong to anyone, and linking by it would hand them that account.
  if (typeof claims.email !== 'string' || !claims.email.includes('@') || claims.email_verified !== true) {
    throw forbidden('第三方账号未提供已验证的邮箱，无法登录');
  }
  const email = claims.email.trim().toLowerCase();
  const [existing] = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  const displayName = (
    (typeof claims.name === 'string' && claims.name.trim()) ||
    email.split('@')[0] ||
    email
  ).slice(0, 50);
  // Nobody knows this password: the account is entered through the provider (or a password reset).
  const passwordHash = existing ? undefined : await hashPassword(randomBytes(32).toString('base64url'));

  return db.transaction(async (tx) => {
    let userId = existing?.id;
    if (!userId) {
      // A concurrent first login may create the same e-mail; the unique index lets one win.
      await tx
        .insert(users)
        .values({ id: randomUUID(), email, passwordHash: passwordHash!, displayName, createdAt: now })
        .onConflictDoNothing();
      const [row] = await tx.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
      userId = row!.id;
    }
    await tx
      .insert(userIdentities)
      .values({ issuer: claims.iss, subject: claims.sub, userId, createdAt: now })
      .onConflictDoNothing();
    const [identity] = await tx
      .select({ userId: userIdentities.userId })
      .from(userIdentities)
      .where(and(eq(userIdentities.issuer, claims.iss), eq(userIdentities.subject, claims.sub)))
      .limit(1);
    return identity!.userId;
  });
}
