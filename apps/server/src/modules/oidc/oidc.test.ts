import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  loginAtProvider,
  type RunningOidcProvider,
  startOidcProvider,
} from '../../../../../e2e/support/oidc-provider';
import { createTestApp } from '../../../test/helpers';
import { auditLog, oidcLogins, userIdentities, users } from '../../db/schema';

// Never opened: the provider redirects here and the test reads code and state off the URL.
const PUBLIC_URL = 'http://127.0.0.1:5999';
const REDIRECT_URI = `${PUBLIC_URL}/third-login`;

let provider: RunningOidcProvider;
let current: Awaited<ReturnType<typeof createTestApp>> | undefined;

beforeAll(async () => {
  provider = await startOidcProvider({
    redirectUris: [REDIRECT_URI],
    accounts: [
      { sub: 'alice-1', email: 'Alice@Example.com', email_verified: true, name: '爱丽丝' },
      { sub: 'bob-2', email: 'bob@example.com', email_verified: false, name: 'Bob' },
      { sub: 'carol-3', email: 'carol@example.com', email_verified: true },
      { sub: 'dave-4', email: 'dave@example.com', email_verified: true, name: 'Dave' },
      { sub: 'erin-5', email_verified: true },
    ],
  });
});
afterAll(async () => {
  await provider?.close();
});
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

const oidcEnv = () => ({
  OIDC_ISSUER: provider.issuer,
  OIDC_CLIENT_ID: provider.clientId,
  OIDC_CLIENT_SECRET: provider.clientSecret,
  OIDC_NAME: '企业微信',
  PUBLIC_URL,
});

async function start(redirect?: string) {
  current ??= await createTestApp({ env: oidcEnv() });
  const query = redirect === undefined ? '' : `?redirect=${encodeURIComponent(redirect)}`;
  const res = await current.app.inject({ method: 'GET', url: `/auth/oidc/start${query}` });
  expect(res.statusCode, res.body).toBe(200);
  return new URL(res.json().data.authorizationUrl as string);
}

const callback = (body: Record<string, unknown>) =>
  current!.app.inject({ method: 'POST', url: '/auth/oidc/callback', payload: body });

/** Start, log in at the provider as `sub`, and hand the code back to the server. */
async function loginAs(sub: string, redirect?: string) {
  const authorizationUrl = await start(redirect);
  const back = await loginAtProvider(authorizationUrl.href, sub, REDIRECT_URI);
  const params = Object.fromEntries(back.searchParams);
  return { res: await callback(params), params };
}

const currentUser = (token: string) =>
  current!.app.inject({
    method: 'GET',
    url: '/api/user/current',
    headers: { authorization: `Bearer ${token}` },
  });

describe('third-party login (OpenID Connect)', () => {
  it('is off without the OIDC variables, and says so in Chinese', async () => {
    current = await createTestApp();
    const config = await current.app.inject({ method: 'GET', url: '/auth/oidc/config' });
    expect(config.json().data).toEqual({ enabled: false, name: '企业账号' });
    const res = await current.app.inject({ method: 'GET', url: '/auth/oidc/start' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ success: false, message: '未配置第三方登录' });
    const cb = await callback({ code: 'x', state: 'y' });
    expect(cb.statusCode).toBe(404);
  });

  it('sends the browser to the provider with PKCE, state and nonce', async () => {
    current = await createTestApp({ env: oidcEnv() });
    const config = await current.app.inject({ method: 'GET', url: '/auth/oidc/config' });
    expect(config.json().data).toEqual({ enabled: true, name: '企业微信' });

    const url = await start('/call-tasks?page=2');
    expect(url.origin).toBe(provider.issuer);
    const q = url.searchParams;
    expect(q.get('client_id')).toBe(provider.clientId);
    expect(q.get('redirect_uri')).toBe(REDIRECT_URI);
    expect(q.get('scope')).toBe('openid email profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toMatch(/^[\w-]{43}$/);
    const [row] = await current.db
      .select()
      .from(oidcLogins)
      .where(eq(oidcLogins.state, q.get('state')!));
    expect(row).toMatchObject({ nonce: q.get('nonce'), redirect: '/call-tasks?page=2' });
    expect(row!.expiresAt.getTime() - Date.now()).toBeGreaterThan(9 * 60_000);
    expect(row!.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(10 * 60_000);
  });

  it('creates an account on first login, without a project, and reuses it on the next', async () => {
    const first = await loginAs('alice-1', '/call-tasks?page=2');
    expect(first.res.statusCode, first.res.body).toBe(200);
    const result = first.res.json().data;
    expect(result.redirect).toBe('/call-tasks?page=2');
    expect(new Date(result.expiresAt).getTime()).toBeGreaterThan(Date.now());

    const me = await currentUser(result.token);
    expect(me.statusCode).toBe(200);
    expect(me.json().data).toMatchObject({ email: 'alice@example.com', displayName: '爱丽丝', projects: [] });

    // The provider's e-mail changes; the identity (iss, sub) still leads to the same account.
    provider.accounts.get('alice-1')!.email = 'alice.new@example.com';
    try {
      const second = await loginAs('alice-1');
      expect(second.res.statusCode, second.res.body).toBe(200);
      expect(second.res.json().data.redirect).toBe('/dashboard');
      const again = await currentUser(second.res.json().data.token);
      expect(again.json().data.id).toBe(me.json().data.id);
    } finally {
      provider.accounts.get('alice-1')!.email = 'Alice@Example.com';
    }
    expect(await current!.db.select().from(users)).toHaveLength(1);
    // Both logins are in the account's 操作日志, as a password login would be.
    const logins = await current!.db.select().from(auditLog).where(eq(auditLog.action, 'auth.login'));
    expect(logins).toHaveLength(2);
    expect(logins[0]).toMatchObject({
      userId: me.json().data.id,
      actor: 'alice@example.com',
      summary: expect.stringContaining(`单点登录（${new URL(provider.issuer).host}）`),
    });
    expect(await current!.db.select().from(userIdentities)).toEqual([
      expect.objectContaining({ issuer: provider.issuer, subject: 'alice-1', userId: me.json().data.id }),
    ]);
  });

  it('links to the existing account with the same verified e-mail', async () => {
    current = await createTestApp({ env: oidcEnv() });
    const id = randomUUID();
    await current.db
      .insert(users)
      .values({ id, email: 'dave@example.com', passwordHash: 'x', displayName: '老戴' });
    const { res } = await loginAs('dave-4');
    expect(res.statusCode, res.body).toBe(200);
    const me = await currentUser(res.json().data.token);
    expect(me.json().data).toMatchObject({ id, displayName: '老戴' });
  });

  it('names a new account after the e-mail when the provider gives no name', async () => {
    // The console passes only code and state; the server vouches for its one issuer.
    const authorizationUrl = await start();
    const back = await loginAtProvider(authorizationUrl.href, 'carol-3', REDIRECT_URI);
    expect(back.searchParams.get('iss')).toBe(provider.issuer);
    const res = await callback({
      code: back.searchParams.get('code'),
      state: back.searchParams.get('state'),
    });
    expect(res.statusCode, res.body).toBe(200);
    const me = await currentUser(res.json().data.token);
    expect(me.json().data).toMatchObject({ email: 'carol@example.com', displayName: 'carol' });
  });

  it('refuses an unverified or missing e-mail and creates nothing', async () => {
    for (const sub of ['bob-2', 'erin-5']) {
      const { res } = await loginAs(sub);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ success: false, message: '第三方账号未提供已验证的邮箱，无法登录' });
    }
    expect(await current!.db.select().from(users)).toHaveLength(0);
    expect(await current!.db.select().from(userIdentities)).toHaveLength(0);
  });

  it('accepts a state once, and refuses unknown and expired ones', async () => {
    const { res, params } = await loginAs('alice-1');
    expect(res.statusCode).toBe(200);
    const expired = '登录请求已过期，请重新发起第三方登录';
    const reused = await callback(params);
    expect(reused.statusCode).toBe(400);
    expect(reused.json().message).toBe(expired);

    const unknown = await callback({ code: params.code, state: 'no-such-state' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe(expired);

    const url = await start();
    const state = url.searchParams.get('state')!;
    await current!.db
      .update(oidcLogins)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oidcLogins.state, state));
    const late = await callback({ code: 'whatever', state });
    expect(late.statusCode).toBe(400);
    expect(late.json().message).toBe(expired);

    const missing = await callback({ state });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toContain('缺少授权码');
  });

  it('answers 502 in Chinese, without secrets, when the provider rejects the code', async () => {
    const url = await start();
    const res = await callback({ code: 'forged-code', state: url.searchParams.get('state')! });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      success: false,
      code: 'UPSTREAM_FAILED',
      message: '第三方登录失败：invalid_grant',
    });
    expect(res.body).not.toContain(provider.clientSecret);
  });

  it('answers 502 when the provider cannot be reached', async () => {
    current = await createTestApp({ env: { ...oidcEnv(), OIDC_ISSUER: 'http://127.0.0.1:1' } });
    const res = await current.app.inject({ method: 'GET', url: '/auth/oidc/start' });
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({
      code: 'UPSTREAM_FAILED',
      message: '第三方登录失败：无法连接认证服务',
    });
  });

  it('keeps the destination on this site', async () => {
    const cases: [string | undefined, string][] = [
      [undefined, '/dashboard'],
      ['/account-info?tab=members#x', '/account-info?tab=members#x'],
      ['//evil.example/x', '/dashboard'],
      ['/\\evil.example', '/dashboard'],
      ['https://evil.example/', '/dashboard'],
      ['javascript:alert(1)', '/dashboard'],
      ['dashboard', '/dashboard'],
      ['/a\nb', '/dashboard'],
    ];
    for (const [redirect, expected] of cases) {
      const url = await start(redirect);
      const [row] = await current!.db
        .select({ redirect: oidcLogins.redirect })
        .from(oidcLogins)
        .where(eq(oidcLogins.state, url.searchParams.get('state')!));
      expect(row?.redirect, String(redirect)).toBe(expected);
    }
  });

  it('builds the redirect_uri from the request origin when PUBLIC_URL is not set', async () => {
    const { PUBLIC_URL: _, ...env } = oidcEnv();
    current = await createTestApp({ env });
    const res = await current.app.inject({
      method: 'GET',
      url: '/auth/oidc/start',
      headers: { host: 'call.example.com:8080' },
    });
    const url = new URL(res.json().data.authorizationUrl);
    expect(url.searchParams.get('redirect_uri')).toBe('http://call.example.com:8080/third-login');
  });
});
