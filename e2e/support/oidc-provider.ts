import { once } from 'node:events';
import type { Server } from 'node:http';
import { freePort } from './server';

/**
 * A real OpenID provider (panva's `oidc-provider`) on loopback, for the server's integration
 * tests and the browser tests alike. Its development login page accepts any password and
 * takes the typed login as the account id (`sub`).
 */
export interface OidcAccount {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface RunningOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Claims served for each sub; tests may change them between logins. */
  accounts: Map<string, OidcAccount>;
  close(): Promise<void>;
}

interface ProviderInstance {
  listen(port: number, host: string): Server;
}
type ProviderClass = new (issuer: string, configuration: Record<string, unknown>) => ProviderInstance;

export async function startOidcProvider(options: {
  port?: number;
  accounts: OidcAccount[];
  redirectUris: string[];
  clientId?: string;
  clientSecret?: string;
}): Promise<RunningOidcProvider> {
  // The package ships no type declarations; a computed specifier keeps it an untyped import
  // instead of a declaration file that two tsconfig projects would each have to find.
  const specifier = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as { default: ProviderClass };
  const port = options.port ?? (await freePort());
  const issuer = `http://127.0.0.1:${port}`;
  const clientId = options.clientId ?? 'callpilot-console';
  const clientSecret = options.clientSecret ?? 'callpilot-test-secret-0123456789';
  const accounts = new Map(options.accounts.map((a) => [a.sub, { ...a }]));

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    pkce: { required: () => true },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    cookies: { keys: ['callpilot-test-cookie-key'] },
    features: { devInteractions: { enabled: true } },
    // Explicit lifetimes, so the provider does not print a notice for each default it falls back to.
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    async findAccount(_ctx: unknown, id: string) {
      if (!accounts.has(id)) return undefined;
      return {
        accountId: id,
        // Read at claim time, so a test that edits an account sees its change on the next login.
        async claims() {
          const { sub, ...rest } = accounts.get(id)!;
          return { sub, ...rest };
        },
      };
    },
  });
  const server = provider.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    issuer,
    clientId,
    clientSecret,
    accounts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Walks the provider's development login and consent pages with plain HTTP, as a browser
 * would, and returns the URL the provider finally redirects to (the console's /third-login
 * with `code`, `state` and `iss`). Each call has its own cookies, so it is a fresh browser.
 */
export async function loginAtProvider(authorizationUrl: string, login: string, redirectUri: string) {
  const cookies = new Map<string, string>();
  const request = async (url: URL, init: RequestInit = {}) => {
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie: cookieHeader() },
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      if (!value || /expires=Thu, 01 Jan 1970/i.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    return res;
  };
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const submit = (url: URL, fields: Record<string, string>) =>
    request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });

  let url = new URL(authorizationUrl);
  let res = await request(url);
  for (let step = 0; step < 20; step++) {
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, url);
      if (`${next.origin}${next.pathname}` === redirectUri) return next;
      url = next;
      res = await request(url);
      continue;
    }
    const html = await res.text();
    if (res.status === 200 && html.includes('name="prompt" value="login"')) {
      res = await submit(url, { prompt: 'login', login, password: 'any-password' });
    } else if (res.status === 200 && html.includes('name="prompt" value="consent"')) {
      res = await submit(url, { prompt: 'consent' });
    } else {
      throw new Error(
        `unexpected answer from the provider at ${url.href} (${res.status}): ${html.slice(0, 500)}`,
      );
    }
  }
  throw new Error('the provider did not redirect back after 20 steps');
}
