import {
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const createdAt = () => timestamp('created_at', { withTimezone: true }).notNull().defaultNow();

export const users = pgTable(
  'users',
  {
    id: text('id').primaryKey(),
    // Stored lower-cased so uniqueness and login ignore case.
    email: text('email').notNull(),
    phone: text('phone'),
    passwordHash: text('password_hash').notNull(),
    displayName: text('display_name').notNull(),
    profile: text('profile').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('users_email_key').on(t.email), uniqueIndex('users_phone_key').on(t.phone)],
);

export const projects = pgTable('projects', {
  id: text('id').primaryKey(),
  name: text('name').notNull(),
  company: text('company').notNull().default(''),
  industry: text('industry').notNull().default(''),
  disabled: boolean('disabled').notNull().default(false),
  createdAt: createdAt(),
});

export const memberships = pgTable(
  'memberships',
  {
    projectId: text('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['owner', 'admin', 'member'] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.userId] }), index('memberships_user_idx').on(t.userId)],
);

/** Opaque bearer tokens: only the SHA-256 of a token is stored, so a database leak leaks no session. */
export const sessions = pgTable(
  'sessions',
  {
    tokenHash: text('token_hash').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    lastSeenAt: timestamp('last_seen_at', { withTimezone: true }).notNull().defaultNow(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    userAgent: text('user_agent').notNull().default(''),
    ip: text('ip').notNull().default(''),
  },
  (t) => [index('sessions_user_idx').on(t.userId), index('sessions_expires_idx').on(t.expiresAt)],
);

/**
 * Per-project balance and limits (spec section 3). With hasBalance false every feature is
 * available; with it true, a feature whose limit is 0 is not.
 */
export const projectLimits = pgTable('project_limits', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  balanceFen: integer('balance_fen').notNull().default(0),
  hasBalance: boolean('has_balance').notNull().default(false),
  assistantLimit: integer('assistant_limit').notNull().default(0),
  knowledgeLimit: integer('knowledge_limit').notNull().default(0),
  ttsCloneLimit: integer('tts_clone_limit').notNull().default(0),
  concurrentCallin: integer('concurrent_callin').notNull().default(0),
  concurrentCallout: integer('concurrent_callout').notNull().default(0),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * One-time codes and reset-link tokens. Only a hash is stored; `target` is the normalised
 * e-mail or phone the code was sent to. Resend throttling reads `createdAt`.
 */
export const oneTimeCodes = pgTable(
  'one_time_codes',
  {
    id: text('id').primaryKey(),
    purpose: text('purpose', {
      enum: ['login', 'reset_password', 'reset_link', 'change_password'],
    }).notNull(),
    target: text('target').notNull(),
    codeHash: text('code_hash').notNull(),
    attempts: integer('attempts').notNull().default(0),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    consumedAt: timestamp('consumed_at', { withTimezone: true }),
  },
  (t) => [
    index('one_time_codes_target_idx').on(t.purpose, t.target, t.createdAt),
    uniqueIndex('one_time_codes_hash_key').on(t.codeHash),
  ],
);

/** Failed logins, per account and per IP, for the 5-failures-then-15-minutes lock. */
export const loginFailures = pgTable(
  'login_failures',
  {
    id: text('id').primaryKey(),
    account: text('account').notNull(),
    ip: text('ip').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    index('login_failures_account_idx').on(t.account, t.createdAt),
    index('login_failures_ip_idx').on(t.ip, t.createdAt),
  ],
);

/** White-label branding per host name. */
export const oemConfigs = pgTable('oem_configs', {
  host: text('host').primaryKey(),
  enabled: boolean('enabled').notNull().default(true),
  name: text('name').notNull(),
  /** data: URL, at most 200 KB of image. */
  logo: text('logo').notNull().default(''),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Development outbox: e-mail and SMS that no real provider is configured for. The operator
 * reads it with `npm run admin -- outbox`; the API never serves it.
 */
export const outbox = pgTable(
  'outbox',
  {
    id: text('id').primaryKey(),
    channel: text('channel', { enum: ['email', 'sms'] }).notNull(),
    recipient: text('recipient').notNull(),
    subject: text('subject').notNull().default(''),
    body: text('body').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('outbox_recipient_idx').on(t.recipient, t.createdAt)],
);

/** A user's link to an external identity provider (OpenID Connect `iss` + `sub`). */
export const userIdentities = pgTable(
  'user_identities',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] }), index('user_identities_user_idx').on(t.userId)],
);

/**
 * In-flight OpenID Connect logins: state → PKCE verifier and nonce, kept server-side so any
 * API process can finish a login another one started.
 */
export const oidcLogins = pgTable('oidc_logins', {
  state: text('state').primaryKey(),
  codeVerifier: text('code_verifier').notNull(),
  nonce: text('nonce').notNull(),
  redirect: text('redirect').notNull().default('/dashboard'),
  createdAt: createdAt(),
  expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
});
