import net from 'node:net';
import path from 'node:path';
import { z } from 'zod';

/** A whole number in [min, max], with one message for every way it can be wrong. */
const wholeNumber = (min: number, max: number, error: string) =>
  z.coerce.number({ error }).int({ error }).min(min, { error }).max(max, { error });

const boolish = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'], {
    error: 'must be one of true, false, 1, 0, yes, no, on, off',
  })
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));

const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

/** A Kamailio in front of this worker: its IP, and the port it sends from when that is pinned. */
export interface SipProxyAddress {
  host: string;
  port: number | null;
}

/**
 * `10.0.0.10`, `10.0.0.10:5060`, `fd00::10` or `[fd00::10]:5060`, comma-separated for a pair of
 * proxies. IP literals only: trusting a header by source address must not hang on DNS.
 */
export function parseSipProxyList(value: string): SipProxyAddress[] | null {
  const list: SipProxyAddress[] = [];
  for (const raw of value.split(',')) {
    const item = raw.trim();
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(item);
    const v4 = /^([\d.]+)(?::(\d+))?$/.exec(item);
    const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [item, undefined];
    const valid = bracketed || !v4 ? net.isIPv6(host) : net.isIPv4(host);
    if (!valid) return null;
    const portNumber = port === undefined ? null : Number(port);
    if (portNumber !== null && !(portNumber >= 1 && portNumber <= 65535)) return null;
    list.push({ host, port: portNumber });
  }
  return list;
}

/**
 * Every variable the server reads. The README's configuration table mirrors this list;
 * keep them in step.
 */
export const envSchema = z.object({
  NODE_ENV: z.preprocess(
    emptyAsUndefined,
    z
      .enum(['production', 'development', 'test'], { error: 'must be production, development or test' })
      .default('production'),
  ),
  PORT: z.preprocess(
    emptyAsUndefined,
    wholeNumber(1, 65535, 'must be a whole number between 1 and 65535').default(3000),
  ),
  HOST: z.preprocess(emptyAsUndefined, z.string().min(1).default('0.0.0.0')),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().min(1).default('./data')),
  DATABASE_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^postgres(ql)?:\/\/.+/, { error: 'must be a postgres:// or postgresql:// connection URL' })
      .optional(),
  ),
  DATABASE_POOL_SIZE: z.preprocess(
    emptyAsUndefined,
    wholeNumber(1, 200, 'must be a whole number between 1 and 200').default(10),
  ),
  DEMO: z.preprocess(
    emptyAsUndefined,
    z.enum(['auto', 'on', 'off'], { error: 'must be auto, on or off' }).default('auto'),
  ),
  DEMO_EMAIL: z.preprocess(emptyAsUndefined, z.email({ error: 'must be an e-mail address' }).optional()),
  DEMO_PASSWORD: z.preprocess(
    emptyAsUndefined,
    z.string().min(8, { error: 'must be at least 8 characters' }).max(128).optional(),
  ),
  LOG_LEVEL: z.preprocess(
    emptyAsUndefined,
    z
      .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
        error: 'must be one of fatal, error, warn, info, debug, trace, silent',
      })
      .default('info'),
  ),
  TRUST_PROXY: z.preprocess(emptyAsUndefined, boolish.default(false)),
  /**
   * Bearer token for GET /metrics. Unset, /metrics answers only loopback and private addresses;
   * set, anyone with it may scrape (long and random: it is compared as given).
   */
  METRICS_TOKEN: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .min(16, { error: 'must be at least 16 characters (e.g. openssl rand -hex 32)' })
      .max(256, { error: 'must be at most 256 characters' })
      .regex(/^[\x21-\x7e]+$/, {
        error: 'must be printable ASCII without spaces (it travels in an HTTP header)',
      })
      .optional(),
  ),
  SHUTDOWN_TIMEOUT_MS: z.preprocess(
    emptyAsUndefined,
    wholeNumber(0, 3_600_000, 'must be a whole number of milliseconds up to 3600000').default(10_000),
  ),
  WEB_DIST: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  PUBLIC_URL: z.preprocess(
    emptyAsUndefined,
    z.url({ error: 'must be the URL users open the console at, e.g. https://call.example.com' }).optional(),
  ),
  /**
   * The server's address as the internet reaches it. DashScope's voice cloning downloads the
   * sample from a signed URL under it; unset, CosyVoice cloning is refused.
   */
  PUBLIC_BASE_URL: z.preprocess(
    emptyAsUndefined,
    z
      .url({ protocol: /^https?$/, error: 'must be the http(s) URL the internet reaches this server at' })
      .optional(),
  ),
  SALES_PHONE: z.preprocess(emptyAsUndefined, z.string().max(40).default('400-000-0000')),
  SMTP_URL: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .regex(/^smtps?:\/\/.+/, { error: 'must be an smtp:// or smtps:// URL' })
      .optional(),
  ),
  SMTP_FROM: z.preprocess(
    emptyAsUndefined,
    z.string().min(3).default('智能语音外呼平台 <no-reply@localhost>'),
  ),
  OIDC_ISSUER: z.preprocess(
    emptyAsUndefined,
    z.url({ error: 'must be the issuer URL of the OpenID provider' }).optional(),
  ),
  OIDC_CLIENT_ID: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  OIDC_CLIENT_SECRET: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  OIDC_NAME: z.preprocess(emptyAsUndefined, z.string().min(1).max(40).default('企业账号')),
  /**
   * How much faster than real time the simulated carrier runs (ring, speech, silence). 1 is
   * real time, which is what a test call in the console should feel like; tests use more.
   */
  SIM_TIME_SCALE: z.preprocess(
    emptyAsUndefined,
    z.coerce
      .number({ error: 'must be a number between 1 and 1000' })
      .min(1, { error: 'must be a number between 1 and 1000' })
      .max(1000, { error: 'must be a number between 1 and 1000' })
      .default(1),
  ),
  /**
   * What this process runs: everything (all), only the HTTP API and console (api), or only the
   * call engine and background workers (worker). Several processes need PostgreSQL.
   */
  ROLE: z.preprocess(
    emptyAsUndefined,
    z.enum(['all', 'api', 'worker'], { error: 'must be all, api or worker' }).default('all'),
  ),
  /**
   * `sim`: every call runs on the simulated carrier. `sip`: this process also runs real phone
   * lines on SIP_PORT (numbers on a trunk dial and answer through it).
   */
  TELEPHONY: z.preprocess(
    emptyAsUndefined,
    z.enum(['sim', 'sip'], { error: 'must be sim or sip' }).default('sim'),
  ),
  /** The SIP port (UDP and TCP) of this process; behind Kamailio each worker has its own. */
  SIP_PORT: z.preprocess(
    emptyAsUndefined,
    wholeNumber(1, 65535, 'must be a port number (1-65535)').default(5060),
  ),
  SIP_HOST: z.preprocess(emptyAsUndefined, z.string().min(1).default('0.0.0.0')),
  /** The address carriers reach this server at, when behind NAT (Via, Contact and SDP). */
  SIP_EXTERNAL_HOST: z.preprocess(emptyAsUndefined, z.string().min(1).optional()),
  /**
   * Kamailio's address as this worker sees it (its SIP_LISTEN_WORKERS socket, or SIP_LISTEN).
   * INVITEs from it are screened by the caller address in their X-Source-Addr header, and the
   * 100 Trying goes out at once, since Kamailio takes a silent worker for a dead one.
   */
  SIP_PROXY: z.preprocess(
    emptyAsUndefined,
    z
      .string()
      .transform((value, ctx) => {
        const list = parseSipProxyList(value);
        if (list) return list;
        ctx.addIssue({
          code: 'custom',
          message:
            "must be Kamailio's IP address, with its port if you like (10.0.0.10, 10.0.0.10:5060 or [fd00::10]:5060), comma-separated for several",
        });
        return z.NEVER;
      })
      .optional(),
  ),
  RTP_PORT_MIN: z.preprocess(
    emptyAsUndefined,
    wholeNumber(1024, 65534, 'must be a port number (1024-65534)').default(20000),
  ),
  RTP_PORT_MAX: z.preprocess(
    emptyAsUndefined,
    wholeNumber(1025, 65535, 'must be a port number (1025-65535)').default(20999),
  ),
  /**
   * HTTP nodes of call flows may reach private, loopback and link-local addresses (an
   * intranet CRM). Off by default: a flow's author must not reach the operator's network.
   */
  FLOW_HTTP_ALLOW_PRIVATE: z.preprocess(emptyAsUndefined, boolish.default(false)),
  /**
   * Webhook endpoints may be on private, loopback and link-local addresses (a receiver on the
   * operator's own network, or a test's local one). Off by default, like FLOW_HTTP_ALLOW_PRIVATE.
   */
  WEBHOOK_ALLOW_PRIVATE: z.preprocess(emptyAsUndefined, boolish.default(false)),
  APP_SECRET: z.preprocess(
    emptyAsUndefined,
    z.string().min(32, { error: 'must be at least 32 characters (e.g. openssl rand -hex 32)' }).optional(),
  ),
});

export type Env = z.infer<typeof envSchema> & { dataDir: string; demoEnabled: boolean; demoEmail: string };

export class EnvError extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

/** Parses once at start; every bad variable gets its own line naming it, so an operator fixes all at once. */
export function parseEnv(source: Record<string, string | undefined> = process.env, cwd = process.cwd()): Env {
  const result = envSchema.safeParse(source);
  if (!result.success) {
    const lines = result.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? 'environment');
      const raw = source[name];
      const got =
        raw === undefined ? '' : ` (got ${JSON.stringify(raw.length > 60 ? `${raw.slice(0, 60)}…` : raw)})`;
      // Never echo a connection string or password back: it may hold a secret.
      const shown = /URL|PASSWORD|SECRET|KEY|TOKEN/.test(name) ? '' : got;
      return `Invalid environment variable ${name}: ${issue.message}${shown}`;
    });
    throw new EnvError(lines);
  }
  const env = result.data;
  const oidcSet = [env.OIDC_ISSUER, env.OIDC_CLIENT_ID, env.OIDC_CLIENT_SECRET].filter(Boolean).length;
  if (oidcSet !== 0 && oidcSet !== 3) {
    throw new EnvError([
      'Invalid environment variable OIDC_ISSUER: OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set together',
    ]);
  }
  const embedded = env.DATABASE_URL === undefined;
  if (embedded && env.ROLE !== 'all') {
    throw new EnvError([
      `Invalid environment variable ROLE: ${env.ROLE} needs DATABASE_URL (the embedded database serves one process, which must be all)`,
    ]);
  }
  if (env.RTP_PORT_MAX - env.RTP_PORT_MIN < 1) {
    throw new EnvError([
      `Invalid environment variable RTP_PORT_MAX: must be above RTP_PORT_MIN (${env.RTP_PORT_MIN}); each call takes one even port`,
    ]);
  }
  const demoEnabled =
    env.DEMO === 'on' || (env.DEMO === 'auto' && (embedded || env.DEMO_EMAIL !== undefined));
  return {
    ...env,
    dataDir: path.resolve(cwd, env.DATA_DIR),
    demoEnabled,
    demoEmail: (env.DEMO_EMAIL ?? 'demo@example.com').toLowerCase(),
  };
}
