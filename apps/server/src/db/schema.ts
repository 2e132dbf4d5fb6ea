import {
  callerIdFormat,
  callStatus,
  cloneVendor,
  contactStatus,
  endReason,
  hangupBy,
  type KnowledgeCalibration,
  speechVendor,
  synthesisVendor,
  type TrunkCodec,
  taskState,
  trunkKind,
  trunkTransport,
  voiceCloneStatus,
} from '@callpilot/contracts';
import { sql } from 'drizzle-orm';
import {
  boolean,
  check,
  customType,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  real,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => 'bytea',
  // PGlite answers bytea as Uint8Array, node-postgres as Buffer; callers always get a Buffer.
  fromDriver: (value) => (Buffer.isBuffer(value) ? value : Buffer.from(value)),
});

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' });

/** A contracts enum's values as the tuple drizzle's text enums want: one list for both layers. */
const values = <T extends string>(e: { options: readonly T[] }) => e.options as unknown as [T, ...T[]];

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
  /** 发布审核: members submit assistant and flow versions; owner/admin approve (publish) or reject. */
  reviewRequired: boolean('review_required').notNull().default(false),
  createdAt: createdAt(),
});

/** The owning project; a project's data goes with it. */
const projectRef = () =>
  text('project_id')
    .notNull()
    .references(() => projects.id, { onDelete: 'cascade' });

export const memberships = pgTable(
  'memberships',
  {
    projectId: projectRef(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['owner', 'admin', 'member', 'readonly'] }).notNull(),
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

/** Failed logins: per account for the 5-failures-then-15-minutes lock, per IP for the login delay. */
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
    /** For messages a call asked for: the template, its variables and the call. */
    meta: jsonb('meta'),
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

// ---- Assistants, LLM providers, knowledge bases ----

/**
 * OpenAI-compatible chat endpoints a project brings (DeepSeek, Qwen, Moonshot, Ollama, vLLM...).
 * The API key is stored encrypted with the server secret and never leaves the server.
 */
export const llmProviders = pgTable(
  'llm_providers',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    baseUrl: text('base_url').notNull(),
    model: text('model').notNull(),
    embeddingModel: text('embedding_model').notNull().default(''),
    /** AES-256-GCM ciphertext (iv.tag.data, base64url); empty when the endpoint needs no key. */
    apiKeyEncrypted: text('api_key_encrypted').notNull().default(''),
    apiKeyHint: text('api_key_hint').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('llm_providers_project_idx').on(t.projectId)],
);

/**
 * A project's speech-recognition endpoints (语音识别配置), chosen per assistant for real lines;
 * keys are sealed like llm_providers'.
 */
export const speechProviders = pgTable(
  'speech_providers',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    vendor: text('vendor', { enum: values(speechVendor) }).notNull(),
    baseUrl: text('base_url').notNull(),
    model: text('model').notNull(),
    /** Aliyun Appkey or Tencent AppID; '' for vendors without one. */
    appId: text('app_id').notNull().default(''),
    /** Aliyun AccessKey ID or Tencent SecretId: the public half of the key pair, shown in the console. */
    keyId: text('key_id').notNull().default(''),
    /** AES-256-GCM ciphertext (iv.tag.data, base64url); empty when the endpoint needs no key. */
    apiKeyEncrypted: text('api_key_encrypted').notNull().default(''),
    apiKeyHint: text('api_key_hint').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('speech_providers_project_idx').on(t.projectId)],
);

/**
 * A project's speech-synthesis endpoints (语音配置 › 语音合成): an assistant's voice names one of
 * these (or the offline espeak voice); keys are sealed like llm_providers'.
 */
export const synthesisProviders = pgTable(
  'synthesis_providers',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    vendor: text('vendor', { enum: values(synthesisVendor) }).notNull(),
    baseUrl: text('base_url').notNull(),
    model: text('model').notNull(),
    /** Aliyun Appkey, Tencent AppID or Volcengine APP ID; '' for vendors without one. */
    appId: text('app_id').notNull().default(''),
    /** Aliyun AccessKey ID or Tencent SecretId: the public half of the key pair. */
    keyId: text('key_id').notNull().default(''),
    apiKeyEncrypted: text('api_key_encrypted').notNull().default(''),
    apiKeyHint: text('api_key_hint').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('synthesis_providers_project_idx').on(t.projectId)],
);

/** One row per project that changed its speech defaults; absent rows read as the contracts' defaults. */
export const speechSettings = pgTable('speech_settings', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  /** The contracts' SpeechSettings, validated on every write. */
  settings: jsonb('settings').notNull(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Voices cloned from a project's sample (声音复刻). `vendorVoiceId` is the vendor's handle and
 * never leaves the server: assistants name the clone by our id.
 */
export const voiceClones = pgTable(
  'voice_clones',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    providerId: text('provider_id')
      .notNull()
      .references(() => synthesisProviders.id, { onDelete: 'restrict' }),
    vendor: text('vendor', { enum: values(cloneVendor) }).notNull(),
    name: text('name').notNull(),
    vendorVoiceId: text('vendor_voice_id').notNull().default(''),
    status: text('status', { enum: values(voiceCloneStatus) }).notNull(),
    failureReason: text('failure_reason').notNull().default(''),
    sampleDurationMs: integer('sample_duration_ms').notNull(),
    /** When the vendor was last asked about a training clone: status polls are spaced out. */
    checkedAt: timestamp('checked_at', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('voice_clones_project_idx').on(t.projectId)],
);

/**
 * An assistant's editable draft. `config` is the contracts' AssistantConfig, validated on every
 * write; calls and tasks run a frozen copy from assistant_versions.
 */
export const assistants = pgTable(
  'assistants',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    use: text('use', { enum: ['outbound', 'inbound', 'both'] }).notNull(),
    status: text('status', { enum: ['enabled', 'disabled'] })
      .notNull()
      .default('enabled'),
    config: jsonb('config').notNull(),
    templateKey: text('template_key'),
    publishedVersion: integer('published_version'),
    /** Bumped on every draft write; compared with the published version's to show unpublished changes. */
    draftRevision: integer('draft_revision').notNull().default(1),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [index('assistants_project_idx').on(t.projectId, t.updatedAt)],
);

export const assistantVersions = pgTable(
  'assistant_versions',
  {
    assistantId: text('assistant_id')
      .notNull()
      .references(() => assistants.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    projectId: projectRef(),
    name: text('name').notNull(),
    use: text('use', { enum: ['outbound', 'inbound', 'both'] }).notNull(),
    config: jsonb('config').notNull(),
    /** The draft revision this version was published from. */
    draftRevision: integer('draft_revision').notNull(),
    note: text('note').notNull().default(''),
    /** Who published: the approver when the version went through review. */
    publishedBy: text('published_by').references(() => users.id, { onDelete: 'set null' }),
    publishedAt: timestamp('published_at', { withTimezone: true }).notNull().defaultNow(),
    /** Set when the version was published by approving a review: who submitted it. */
    submittedBy: text('submitted_by').references(() => users.id, { onDelete: 'set null' }),
    reviewId: text('review_id'),
  },
  (t) => [primaryKey({ columns: [t.assistantId, t.version] })],
);

/** Numbers that must never be called again by this project (opt-outs, manual entries, imports). */
export const doNotCall = pgTable(
  'do_not_call',
  {
    projectId: projectRef(),
    phone: text('phone').notNull(),
    reason: text('reason').notNull().default(''),
    source: text('source', { enum: ['opt_out', 'manual', 'import'] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.phone] })],
);

export const knowledgeBases = pgTable(
  'knowledge_bases',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    chunkSize: integer('chunk_size').notNull().default(500),
    chunkOverlap: integer('chunk_overlap').notNull().default(50),
    /**
     * Bumped whenever the base's searchable content changes (a document indexed or removed, a
     * segment edited): calibration and term statistics computed at an older revision are stale.
     */
    revision: integer('revision').notNull().default(0),
    /** KnowledgeCalibration plus the revision it was learned at (knowledge-calibration.ts). */
    calibration: jsonb('calibration').$type<KnowledgeCalibration & { revision: number }>(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('knowledge_bases_project_idx').on(t.projectId)],
);

/** 口语词典: a project's own colloquial words for the standard term its bases are written in. */
export const knowledgeTerms = pgTable(
  'knowledge_terms',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    standard: text('standard').notNull(),
    variants: text('variants').array().notNull(),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex('knowledge_terms_project_standard_idx').on(t.projectId, t.standard)],
);

/** 批量测试 runs; their questions are knowledge_batch_items (a restart resumes unanswered ones). */
export const knowledgeBatchTests = pgTable(
  'knowledge_batch_tests',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    knowledgeBaseId: text('knowledge_base_id')
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: 'cascade' }),
    fileName: text('file_name').notNull(),
    status: text('status', { enum: ['running', 'done', 'failed'] })
      .notNull()
      .default('running'),
    error: text('error').notNull().default(''),
    threshold: real('threshold').notNull(),
    topK: integer('top_k').notNull().default(5),
    llmProviderId: text('llm_provider_id'),
    mode: text('mode', { enum: ['fulltext', 'hybrid'] })
      .notNull()
      .default('fulltext'),
    /** Rows of the upload left out, with the reason (downloadable as CSV). */
    skippedRows: jsonb('skipped_rows').$type<{ row: number; question: string; reason: string }[]>().notNull(),
    /** Lease of the process running it; a stale lease lets another process resume it. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    createdBy: text('created_by'),
    createdAt: createdAt(),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [index('knowledge_batch_tests_base_idx').on(t.projectId, t.knowledgeBaseId, t.createdAt)],
);

export const knowledgeBatchItems = pgTable(
  'knowledge_batch_items',
  {
    testId: text('test_id')
      .notNull()
      .references(() => knowledgeBatchTests.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    question: text('question').notNull(),
    expected: text('expected'),
    /** Null until the question has been run. */
    outcome: text('outcome', {
      enum: ['correct', 'wrong', 'refused', 'refused_correctly', 'answered_unanswerable'],
    }),
    verdict: text('verdict', { enum: ['answer', 'low_confidence', 'ambiguous', 'no_match'] }),
    confidence: real('confidence'),
    expectedRank: integer('expected_rank'),
    topSegmentId: text('top_segment_id'),
    topText: text('top_text'),
  },
  (t) => [primaryKey({ columns: [t.testId, t.position] })],
);

/**
 * An uploaded file and its indexing job. The original bytes stay in the database so any server
 * process can (re)index it and a restart resumes queued or interrupted work (lease columns).
 */
export const knowledgeDocuments = pgTable(
  'knowledge_documents',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    knowledgeBaseId: text('knowledge_base_id')
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: 'cascade' }),
    fileName: text('file_name').notNull(),
    fileType: text('file_type', { enum: ['txt', 'md', 'pdf', 'docx', 'csv', 'xlsx'] }).notNull(),
    kind: text('kind', { enum: ['text', 'qa'] }).notNull(),
    sizeBytes: integer('size_bytes').notNull(),
    content: bytea('content').notNull(),
    status: text('status', { enum: ['queued', 'parsing', 'ready', 'failed'] })
      .notNull()
      .default('queued'),
    progress: integer('progress').notNull().default(0),
    error: text('error').notNull().default(''),
    segmentCount: integer('segment_count').notNull().default(0),
    attempts: integer('attempts').notNull().default(0),
    /** A worker owns the job until then; an expired lease (crash) makes it claimable again. */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('knowledge_documents_base_idx').on(t.knowledgeBaseId, t.createdAt),
    index('knowledge_documents_status_idx').on(t.status, t.leaseUntil),
  ],
);

/**
 * Retrieval units. `terms` holds the jieba segmentation joined by spaces, indexed with the
 * 'simple' text-search configuration, because Postgres has no Chinese parser of its own.
 */
export const knowledgeSegments = pgTable(
  'knowledge_segments',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    knowledgeBaseId: text('knowledge_base_id')
      .notNull()
      .references(() => knowledgeBases.id, { onDelete: 'cascade' }),
    documentId: text('document_id')
      .notNull()
      .references(() => knowledgeDocuments.id, { onDelete: 'cascade' }),
    position: integer('position').notNull(),
    content: text('content').notNull(),
    question: text('question'),
    answer: text('answer'),
    /** Other ways a caller may ask a pair's question (相似问); empty for text segments. */
    similarQuestions: text('similar_questions').array().notNull().default([]),
    enabled: boolean('enabled').notNull().default(true),
    /** The words of the content and of the similar questions (text.ts segmentTerms). */
    terms: text('terms').notNull(),
    termsVector: tsvector('terms_vector').notNull().generatedAlwaysAs(sql`to_tsvector('simple', terms)`),
    /** Optional embedding from the project's embeddings endpoint (hybrid ranking). */
    embedding: real('embedding').array(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    index('knowledge_segments_document_idx').on(t.documentId, t.position),
    index('knowledge_segments_base_idx').on(t.knowledgeBaseId),
    index('knowledge_segments_terms_idx').using('gin', t.termsVector),
  ],
);

/**
 * One row per call, inbound or outbound, from the first dial to the end of its analysis.
 * Numbers, names and the assistant's name are snapshots: the record stays readable after a
 * contact, task or assistant is deleted.
 */
export const calls = pgTable(
  'calls',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    direction: text('direction', { enum: ['outbound', 'inbound'] }).notNull(),
    callerNumber: text('caller_number').notNull(),
    calleeNumber: text('callee_number').notNull(),
    /** Outbound tasks arrive with issue 7; no foreign key until their table exists. */
    taskId: text('task_id'),
    taskName: text('task_name'),
    contactId: text('contact_id'),
    contactName: text('contact_name'),
    assistantId: text('assistant_id').references(() => assistants.id, { onDelete: 'set null' }),
    assistantName: text('assistant_name').notNull().default(''),
    /** null when a test call ran the unpublished draft. */
    assistantVersion: integer('assistant_version'),
    status: text('status', { enum: values(callStatus) }).notNull(),
    endReason: text('end_reason', { enum: values(endReason) }),
    hangupBy: text('hangup_by', { enum: values(hangupBy) }),
    persona: text('persona'),
    startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
    answeredAt: timestamp('answered_at', { withTimezone: true }),
    endedAt: timestamp('ended_at', { withTimezone: true }),
    talkSeconds: integer('talk_seconds').notNull().default(0),
    turnCount: integer('turn_count').notNull().default(0),
    machineGrade: text('machine_grade', { enum: ['A', 'B', 'C', 'D'] }),
    humanGrade: text('human_grade', { enum: ['A', 'B', 'C', 'D'] }),
    /** human ?? machine, kept as a column so the grade filter uses an index. */
    intentGrade: text('intent_grade', { enum: ['A', 'B', 'C', 'D'] }),
    humanGradedBy: text('human_graded_by').references(() => users.id, { onDelete: 'set null' }),
    humanGradedAt: timestamp('human_graded_at', { withTimezone: true }),
    gradeReason: text('grade_reason').notNull().default(''),
    analysisBy: text('analysis_by', { enum: ['llm', 'rules'] }),
    summary: text('summary').notNull().default(''),
    fields: jsonb('fields').notNull().default({}),
    tags: text('tags').array().notNull().default([]),
    variables: jsonb('variables').notNull().default({}),
    transferNumber: text('transfer_number'),
    transferredAt: timestamp('transferred_at', { withTimezone: true }),
    /** The call flow that answered (snapshot of its name); flowVersion null: a draft test call. */
    flowId: text('flow_id'),
    flowName: text('flow_name'),
    flowVersion: integer('flow_version'),
    /** The contracts' FlowStep[]: each node the call entered, in order. */
    flowPath: jsonb('flow_path').notNull().default([]),
    recording: text('recording', { enum: ['none', 'pending', 'ready', 'failed'] })
      .notNull()
      .default('none'),
    /**
     * `mix`: the recording is mixed from the synthesised turns (the simulated carrier). `line`: a
     * real line's call, whose recording is the media worker's stereo WAV and nothing else; a
     * re-enactment of a real call would put words in the caller's mouth.
     */
    recordingSource: text('recording_source', { enum: ['mix', 'line'] })
      .notNull()
      .default('mix'),
    /**
     * Key in the recording store (DATA_DIR/recordings on disk) once ready; while `recording` is
     * failed, why it failed (磁盘已满，录音未能保存), since a failed recording has no key.
     */
    recordingKey: text('recording_key'),
    /** Why the recording could not be made or kept (磁盘已满…), while `recording` is failed. */
    recordingError: text('recording_error'),
    recordingDurationMs: integer('recording_duration_ms'),
    /**
     * A recording worker's claim on the pending mix (any process may mix it; only one at a time).
     * Expires so a mix cut off by a crash is picked up again.
     */
    recordingLeaseOwner: text('recording_lease_owner'),
    recordingLeaseUntil: timestamp('recording_lease_until', { withTimezone: true }),
    /**
     * The process running a live call and how long its claim holds without renewal. A live call
     * whose lease ran out was left by a dead process (the call repository's one rule).
     */
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    // Live calls are few: the inbound concurrency check and the orphan sweep read only these.
    index('calls_live_idx').on(t.projectId, t.direction).where(sql`${t.status} <> 'ended'`),
    index('calls_project_started_idx').on(t.projectId, t.startedAt),
    index('calls_project_reason_started_idx').on(t.projectId, t.endReason, t.startedAt),
    index('calls_project_grade_started_idx').on(t.projectId, t.intentGrade, t.startedAt),
    // 评级一致性 reads a range's re-graded calls: few rows, found without scanning the range.
    index('calls_project_regraded_idx').on(t.projectId, t.startedAt).where(sql`${t.humanGrade} is not null`),
    index('calls_task_idx').on(t.taskId),
    // The dialer's per-number daily cap counts a number's calls of today across the project.
    index('calls_project_callee_started_idx').on(t.projectId, t.calleeNumber, t.startedAt),
    index('calls_recording_pending_idx').on(t.recording),
    // The flow list's 7-day counts and the canvas statistics read one flow's calls by time.
    index('calls_project_flow_started_idx')
      .on(t.projectId, t.flowId, t.startedAt)
      .where(sql`${t.flowId} is not null`),
  ],
);

/** The transcript: what each side said, when (offsets from answer), and what it cost. */
export const callTurns = pgTable(
  'call_turns',
  {
    callId: text('call_id')
      .notNull()
      .references(() => calls.id, { onDelete: 'cascade' }),
    index: integer('index').notNull(),
    speaker: text('speaker', { enum: ['assistant', 'callee'] }).notNull(),
    text: text('text').notNull(),
    dtmf: text('dtmf'),
    startMs: integer('start_ms').notNull(),
    endMs: integer('end_ms').notNull(),
    interrupted: boolean('interrupted').notNull().default(false),
    latency: jsonb('latency'),
    segments: jsonb('segments').notNull().default([]),
  },
  (t) => [primaryKey({ columns: [t.callId, t.index] })],
);

/**
 * A project's SIP trunk to its carrier or PBX: register-based (we register with credentials) or
 * IP-based (the peer sends from known addresses). The password is stored encrypted with the server
 * secret and never leaves the server. The status columns are written by the SIP runtime only.
 */
export const sipTrunks = pgTable(
  'sip_trunks',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    kind: text('kind', { enum: values(trunkKind) }).notNull(),
    transport: text('transport', { enum: values(trunkTransport) })
      .notNull()
      .default('udp'),
    /** Register trunks: host[:port]. */
    registrar: text('registrar').notNull().default(''),
    username: text('username').notNull().default(''),
    /** Empty: the username authenticates. */
    authUsername: text('auth_username').notNull().default(''),
    /** AES-256-GCM ciphertext (iv.tag.data, base64url), like llm_providers.api_key_encrypted. */
    passwordEncrypted: text('password_encrypted').notNull().default(''),
    passwordHint: text('password_hint').notNull().default(''),
    registerExpires: integer('register_expires').notNull().default(300),
    outboundProxy: text('outbound_proxy').notNull().default(''),
    /** IP trunks: host[:port] INVITEs are sent to. */
    signallingAddress: text('signalling_address').notNull().default(''),
    /** IP trunks: the IPs and CIDR ranges inbound INVITEs are accepted from (canonical text). */
    peerAddresses: jsonb('peer_addresses').$type<string[]>().notNull().default([]),
    codecs: jsonb('codecs').$type<TrunkCodec[]>().notNull().default(['PCMA', 'PCMU']),
    callerIdFormat: text('caller_id_format', { enum: values(callerIdFormat) })
      .notNull()
      .default('national'),
    maxConcurrent: integer('max_concurrent').notNull().default(30),
    enabled: boolean('enabled').notNull().default(true),
    regStatus: text('reg_status', { enum: ['unregistered', 'registering', 'registered', 'failed'] })
      .notNull()
      .default('unregistered'),
    /** The carrier's reason for the last failed registration (its status line, a Reason header). */
    regDetail: text('reg_detail').notNull().default(''),
    regAt: timestamp('reg_at', { withTimezone: true }),
    optionsAt: timestamp('options_at', { withTimezone: true }),
    optionsRttMs: integer('options_rtt_ms'),
    /** SIP status of the last OPTIONS answer; 408 when none came. */
    optionsStatus: integer('options_status'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('sip_trunks_project_name_key').on(t.projectId, t.name),
    // The target of project_numbers' (project_id, trunk_id) reference: a number can only use a
    // trunk of its own project, whatever a request says.
    uniqueIndex('sip_trunks_project_id_key').on(t.projectId, t.id),
  ],
);

/** 通话流程: the draft the editor saves; published versions are frozen in callFlowVersions. */
export const callFlows = pgTable(
  'call_flows',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    description: text('description').notNull().default(''),
    /** The contracts' FlowGraph. */
    draft: jsonb('draft').notNull(),
    /** The version calls run now; null before the first publish. */
    publishedVersion: integer('published_version'),
    /** The draft differs from the live version (set on save, cleared on publish and rollback). */
    draftChanged: boolean('draft_changed').notNull().default(true),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    // Numbers reference (project, flow) so a number can never point at another project's flow.
    uniqueIndex('call_flows_project_id_unique').on(t.projectId, t.id),
    index('call_flows_project_idx').on(t.projectId, t.updatedAt),
  ],
);

/** Audio files a flow's 放音 nodes play instead of synthesised text (8 kHz mono WAV in the store). */
export const flowAudio = pgTable(
  'flow_audio',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    /** Key in the recording store. */
    storageKey: text('storage_key').notNull(),
    durationMs: integer('duration_ms').notNull(),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [index('flow_audio_project_idx').on(t.projectId)],
);

/** A published version of a flow: calls keep the version they started with. */
export const callFlowVersions = pgTable(
  'call_flow_versions',
  {
    flowId: text('flow_id')
      .notNull()
      .references(() => callFlows.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    graph: jsonb('graph').notNull(),
    note: text('note').notNull().default(''),
    publishedBy: text('published_by').references(() => users.id, { onDelete: 'set null' }),
    publishedAt: timestamp('published_at', { withTimezone: true }).notNull().defaultNow(),
    submittedBy: text('submitted_by').references(() => users.id, { onDelete: 'set null' }),
    reviewId: text('review_id'),
  },
  (t) => [primaryKey({ columns: [t.flowId, t.version] })],
);

/** 外显号码: numbers the project may present to callees (its trunk's DIDs). */
export const projectNumbers = pgTable(
  'project_numbers',
  {
    projectId: projectRef(),
    number: text('number').notNull(),
    label: text('label').notNull().default(''),
    enabled: boolean('enabled').notNull().default(true),
    /** The assistant whose published version answers calls to this number (呼入). */
    inboundAssistantId: text('inbound_assistant_id').references(() => assistants.id, {
      onDelete: 'set null',
    }),
    /** Or the call flow whose published version answers them (never both). */
    inboundFlowId: text('inbound_flow_id'),
    /** The SIP trunk the number's calls go through; null: the simulated carrier (模拟线路). */
    trunkId: text('trunk_id'),
    /**
     * 休息中 since this moment: tasks place no calls from it (a number carriers or phone apps have
     * marked as spam recovers when it is left alone for a while); it still answers inbound calls.
     */
    restingSince: timestamp('resting_since', { withTimezone: true }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.number] }),
    // A flow is deleted only once no number answers with it (the service says why); NO ACTION,
    // not RESTRICT, so deleting a project cascades through both tables in one statement.
    foreignKey({
      name: 'project_numbers_flow_fk',
      columns: [t.projectId, t.inboundFlowId],
      foreignColumns: [callFlows.projectId, callFlows.id],
    }).onDelete('no action'),
    check('project_numbers_one_inbound', sql`${t.inboundAssistantId} is null or ${t.inboundFlowId} is null`),
    foreignKey({
      name: 'project_numbers_trunk_fk',
      columns: [t.projectId, t.trunkId],
      foreignColumns: [sipTrunks.projectId, sipTrunks.id],
    }).onDelete('restrict'),
    index('project_numbers_trunk_idx').on(t.trunkId),
    // A call to a number must reach exactly one project.
    uniqueIndex('project_numbers_inbound_unique')
      .on(t.number)
      .where(sql`${t.inboundAssistantId} is not null or ${t.inboundFlowId} is not null`),
  ],
);

/**
 * Calls asked for by a process without the engine (ROLE=api) and run by whichever engine process
 * claims them first (ROLE=worker or all). The id is the call's id.
 */
export const callRequests = pgTable('call_requests', {
  id: text('id').primaryKey(),
  projectId: projectRef(),
  kind: text('kind', { enum: ['test', 'inbound_test', 'flow_test', 'api_call'] }).notNull(),
  payload: jsonb('payload').notNull(),
  claimedBy: text('claimed_by'),
  claimedAt: timestamp('claimed_at', { withTimezone: true }),
  createdAt: createdAt(),
});

/** An outbound call task (呼出任务): settings are the contracts' TaskSettings, validated on write. */
export const callTasks = pgTable(
  'call_tasks',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    state: text('state', { enum: values(taskState) })
      .notNull()
      .default('draft'),
    assistantId: text('assistant_id').references(() => assistants.id, { onDelete: 'set null' }),
    assistantName: text('assistant_name').notNull().default(''),
    /** Frozen when the task starts; calls run this version. */
    assistantVersion: integer('assistant_version'),
    settings: jsonb('settings').notNull(),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    startedAt: timestamp('started_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
    deletedAt: timestamp('deleted_at', { withTimezone: true }),
  },
  (t) => [
    index('call_tasks_project_idx').on(t.projectId, t.createdAt),
    index('call_tasks_state_idx').on(t.state),
  ],
);

/**
 * The people a task calls. The dialer claims due rows with FOR UPDATE SKIP LOCKED and a lease;
 * `attempts` counts calls started, so a crash can never let a contact be called more often than
 * its rules allow.
 */
export const taskContacts = pgTable(
  'task_contacts',
  {
    id: text('id').primaryKey(),
    taskId: text('task_id')
      .notNull()
      .references(() => callTasks.id, { onDelete: 'cascade' }),
    projectId: projectRef(),
    /** Normalised: 11-digit mobile, or a landline with its area code (0xx...). */
    phone: text('phone').notNull(),
    name: text('name').notNull().default(''),
    variables: jsonb('variables').notNull().default({}),
    rowNumber: integer('row_number'),
    status: text('status', { enum: values(contactStatus) })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    lastCallId: text('last_call_id'),
    lastEndReason: text('last_end_reason'),
    skipReason: text('skip_reason'),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('task_contacts_task_phone_idx').on(t.taskId, t.phone),
    index('task_contacts_due_idx').on(t.taskId, t.status, t.nextAttemptAt),
    index('task_contacts_lease_idx').on(t.status, t.leaseUntil),
  ],
);

/** An uploaded (or pasted) contact file, kept until committed so the column mapping can change. */
export const taskImports = pgTable('task_imports', {
  id: text('id').primaryKey(),
  projectId: projectRef(),
  taskId: text('task_id')
    .notNull()
    .references(() => callTasks.id, { onDelete: 'cascade' }),
  fileName: text('file_name').notNull(),
  content: bytea('content').notNull(),
  committedAt: timestamp('committed_at', { withTimezone: true }),
  createdAt: createdAt(),
});

/** Rows an import refused, with why: counted in the preview and downloadable. */
export const taskImportRejects = pgTable(
  'task_import_rejects',
  {
    importId: text('import_id')
      .notNull()
      .references(() => taskImports.id, { onDelete: 'cascade' }),
    taskId: text('task_id')
      .notNull()
      .references(() => callTasks.id, { onDelete: 'cascade' }),
    rowNumber: integer('row_number').notNull(),
    kind: text('kind', { enum: ['invalid', 'duplicate', 'do_not_call'] }).notNull(),
    phone: text('phone').notNull(),
    name: text('name').notNull().default(''),
    raw: text('raw').notNull().default(''),
  },
  (t) => [
    primaryKey({ columns: [t.importId, t.rowNumber] }),
    index('task_import_rejects_task_idx').on(t.taskId),
  ],
);

/**
 * API keys of the open API (/opendock/v1). Only the SHA-256 of the whole key is stored: a leaked
 * database does not leak working keys. A roll creates the new key and gives the old one an
 * `expires_at` (the grace period) and `rolled_to_id`; a revoke sets `revoked_at` (every process
 * drops its cached copy on the `api_key_revoked` notification).
 */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    keyHash: text('key_hash').notNull(),
    last4: text('last4').notNull(),
    /** The contracts' ApiKeyScopes. */
    scopes: jsonb('scopes').notNull(),
    ipAllowlist: jsonb('ip_allowlist').$type<string[]>().notNull().default([]),
    rateLimitPerMinute: integer('rate_limit_per_minute').notNull().default(600),
    expiresAt: timestamp('expires_at', { withTimezone: true }),
    rolledToId: text('rolled_to_id'),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
    revokedBy: text('revoked_by').references(() => users.id, { onDelete: 'set null' }),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true }),
    lastUsedIp: text('last_used_ip'),
  },
  (t) => [
    uniqueIndex('api_keys_hash_unique').on(t.keyHash),
    index('api_keys_project_idx').on(t.projectId, t.createdAt),
  ],
);

/** Every open-API request a key made (30 days), written in batches off the request path. */
export const apiKeyRequests = pgTable(
  'api_key_requests',
  {
    id: text('id').primaryKey(),
    keyId: text('key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    projectId: projectRef(),
    at: timestamp('at', { withTimezone: true }).notNull(),
    method: text('method').notNull(),
    path: text('path').notNull(),
    status: integer('status').notNull(),
    latencyMs: integer('latency_ms').notNull(),
    ip: text('ip').notNull(),
  },
  (t) => [index('api_key_requests_key_idx').on(t.keyId, t.at), index('api_key_requests_at_idx').on(t.at)],
);

/**
 * `Idempotency-Key` answers of the open API's POSTs (24 h). A row without `status` is a request
 * still in progress: a second request with the same key waits for nothing and answers 409.
 */
export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    projectId: projectRef(),
    key: text('key').notNull(),
    /** SHA-256 of method, path and body: the same key with another request is refused. */
    requestHash: text('request_hash').notNull(),
    status: integer('status'),
    response: jsonb('response'),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.key] }),
    index('idempotency_keys_created_idx').on(t.createdAt),
  ],
);

/** Where a project's events go. The signing secret is sealed with the app secret (lib/secret-box). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    url: text('url').notNull(),
    description: text('description').notNull().default(''),
    events: jsonb('events').$type<string[]>().notNull(),
    enabled: boolean('enabled').notNull().default(true),
    disabledReason: text('disabled_reason', { enum: ['manual', 'gone', 'failing'] }),
    disabledAt: timestamp('disabled_at', { withTimezone: true }),
    secret: text('secret').notNull(),
    /** After a roll the old secret signs too (both signatures in the header) until then. */
    previousSecret: text('previous_secret'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true }),
    /** First failed attempt since the last success; 5 days of it disables the endpoint. */
    failingSince: timestamp('failing_since', { withTimezone: true }),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index('webhook_endpoints_project_idx').on(t.projectId)],
);

/**
 * The durable outbox: one row per event and endpoint, written when the event happens. Any process
 * claims due rows with FOR UPDATE SKIP LOCKED and a lease (`lease_until`), so a crash mid-send
 * leaves the row to be taken again; (endpoint, event) is unique, so an event is never enqueued twice.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text('id').primaryKey(),
    endpointId: text('endpoint_id')
      .notNull()
      .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
    projectId: projectRef(),
    /** `msg_…`: the webhook-id header, the same on every attempt. */
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    payload: jsonb('payload').notNull(),
    test: boolean('test').notNull().default(false),
    status: text('status', { enum: ['pending', 'succeeded', 'failed'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
    leaseOwner: text('lease_owner'),
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    lastStatusCode: integer('last_status_code'),
    lastDurationMs: integer('last_duration_ms'),
    lastError: text('last_error'),
    createdAt: createdAt(),
    updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_event_unique').on(t.endpointId, t.eventId),
    index('webhook_deliveries_due_idx').on(t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_endpoint_idx').on(t.endpointId, t.createdAt),
    index('webhook_deliveries_created_idx').on(t.createdAt),
  ],
);

/** Each attempt of a delivery, automatic or a manual replay, with what was sent and answered. */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: text('id').primaryKey(),
    deliveryId: text('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    at: timestamp('at', { withTimezone: true }).notNull(),
    trigger: text('trigger', { enum: ['auto', 'replay'] }).notNull(),
    statusCode: integer('status_code'),
    durationMs: integer('duration_ms').notNull(),
    error: text('error'),
    requestHeaders: jsonb('request_headers').$type<Record<string, string>>().notNull(),
    responseBody: text('response_body'),
  },
  (t) => [index('webhook_attempts_delivery_idx').on(t.deliveryId, t.at)],
);

/**
 * 数据统计 rollups: per project and hour (by when the call started; China time is UTC+8 with no
 * daylight saving, so an hour bucket is the same hour in both), one row per combination of the
 * dimensions the reports group by. Never edited in place: a call's change marks its hour dirty
 * (`call_stats_dirty`) and the rollup worker recomputes that project-hour from `calls` and
 * `call_turns`, so a rebuild after a restart equals the live rows by construction. Dimensions use
 * '' and 0 for "none" so that they can be part of the primary key.
 */
export const callStatsHourly = pgTable(
  'call_stats_hourly',
  {
    projectId: projectRef(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    direction: text('direction', { enum: ['outbound', 'inbound'] }).notNull(),
    assistantId: text('assistant_id').notNull().default(''),
    assistantVersion: integer('assistant_version').notNull().default(0),
    /** The project's number on the call: the caller number outbound, the number dialled inbound. */
    lineNumber: text('line_number').notNull().default(''),
    flowId: text('flow_id').notNull().default(''),
    taskId: text('task_id').notNull().default(''),
    calls: integer('calls').notNull().default(0),
    answered: integer('answered').notNull().default(0),
    /** Answered and talked to an assistant (inbound: 小助手接待). */
    assistantAnswered: integer('assistant_answered').notNull().default(0),
    transferred: integer('transferred').notNull().default(0),
    optOut: integer('opt_out').notNull().default(0),
    /** Inbound: hung up while still ringing / in the flow before anyone talked / refused over concurrentCallin. */
    abandonedRinging: integer('abandoned_ringing').notNull().default(0),
    abandonedFlow: integer('abandoned_flow').notNull().default(0),
    overLimit: integer('over_limit').notNull().default(0),
    /** Outbound refusals by the network or the callee: busy, rejected. */
    rejected: integer('rejected').notNull().default(0),
    /** Answered calls that talked under 10 s: a caller-number health signal. */
    shortAnswered: integer('short_answered').notNull().default(0),
    answeredWithin3: integer('answered_within_3').notNull().default(0),
    answeredWithin5: integer('answered_within_5').notNull().default(0),
    answeredWithin10: integer('answered_within_10').notNull().default(0),
    answeredWithin20: integer('answered_within_20').notNull().default(0),
    talkSecondsSum: integer('talk_seconds_sum').notNull().default(0),
    talkSecondsMax: integer('talk_seconds_max').notNull().default(0),
    /** started → answered, answered calls only. */
    waitSecondsSum: integer('wait_seconds_sum').notNull().default(0),
    waitSecondsMax: integer('wait_seconds_max').notNull().default(0),
    turnsSum: integer('turns_sum').notNull().default(0),
    gradeA: integer('grade_a').notNull().default(0),
    gradeB: integer('grade_b').notNull().default(0),
    gradeC: integer('grade_c').notNull().default(0),
    gradeD: integer('grade_d').notNull().default(0),
  },
  (t) => [
    primaryKey({
      columns: [
        t.projectId,
        t.hour,
        t.direction,
        t.assistantId,
        t.assistantVersion,
        t.lineNumber,
        t.flowId,
        t.taskId,
      ],
    }),
  ],
);

/**
 * Per project, hour and assistant version: histograms the reports cannot sum from averages. `kind`
 * 'hangup_turn': answered calls the callee hung up, `bucket` = the turn count (30 = 30 or more);
 * 'latency_<component>' (recognition, retrieval, brain, synthesis): assistant turns, `bucket` =
 * the latency's log bucket (see the rollup code); percentiles are read from the buckets.
 */
export const callStatsHistogram = pgTable(
  'call_stats_histogram',
  {
    projectId: projectRef(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    assistantId: text('assistant_id').notNull().default(''),
    assistantVersion: integer('assistant_version').notNull().default(0),
    kind: text('kind').notNull(),
    bucket: integer('bucket').notNull(),
    count: integer('count').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.projectId, t.hour, t.assistantId, t.assistantVersion, t.kind, t.bucket] }),
  ],
);

/**
 * Per project, hour and knowledge base: callee questions that reached retrieval, how many found a
 * confident answer, how many none.
 */
export const knowledgeStatsHourly = pgTable(
  'knowledge_stats_hourly',
  {
    projectId: projectRef(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    knowledgeBaseId: text('knowledge_base_id').notNull(),
    questions: integer('questions').notNull().default(0),
    hits: integer('hits').notNull().default(0),
    noAnswer: integer('no_answer').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.hour, t.knowledgeBaseId] })],
);

/**
 * 常用分段: how often each segment answered a caller's question, per project-hour and knowledge
 * base, rewritten with the hour like the other rollups (so the report never joins turns to calls).
 */
export const knowledgeSegmentHitsHourly = pgTable(
  'knowledge_segment_hits_hourly',
  {
    projectId: projectRef(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    knowledgeBaseId: text('knowledge_base_id').notNull(),
    segmentId: text('segment_id').notNull(),
    hits: integer('hits').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.hour, t.knowledgeBaseId, t.segmentId] })],
);

/**
 * Questions retrieval could not answer confidently (the knowledge-gap list's raw material), one
 * per callee turn, rewritten with its hour by the rollup worker.
 */
export const knowledgeGaps = pgTable(
  'knowledge_gaps',
  {
    projectId: projectRef(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    callId: text('call_id')
      .notNull()
      .references(() => calls.id, { onDelete: 'cascade' }),
    turnIndex: integer('turn_index').notNull(),
    knowledgeBaseId: text('knowledge_base_id').notNull(),
    question: text('question').notNull(),
    /** Best segment found below the assistant's threshold (the suggested pair), if any. */
    bestSegmentId: text('best_segment_id'),
    bestScore: real('best_score'),
    askedAt: timestamp('asked_at', { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.callId, t.turnIndex, t.knowledgeBaseId] }),
    index('knowledge_gaps_project_idx').on(t.projectId, t.askedAt),
    // The gap list reads a range of hours, as every rollup is read.
    index('knowledge_gaps_project_hour_idx').on(t.projectId, t.hour),
  ],
);

/** Project-hours whose rollups must be recomputed; the rollup worker claims them with SKIP LOCKED. */
export const callStatsDirty = pgTable(
  'call_stats_dirty',
  {
    projectId: projectRef(),
    hour: timestamp('hour', { withTimezone: true }).notNull(),
    markedAt: timestamp('marked_at', { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.hour] })],
);

// ---------------------------------------------------------------------------------------------
// 短信管理 (SMS)
// ---------------------------------------------------------------------------------------------

const smsReviewStatuses = ['draft', 'reviewing', 'approved', 'rejected', 'withdrawn'] as const;

/** The review workflow's columns, the same on signatures and templates (sms-review.service.ts). */
const smsReviewColumns = () => ({
  status: text('status', { enum: smsReviewStatuses }).notNull().default('draft'),
  rejectReason: text('reject_reason'),
  /** The provider it was submitted to, and its reference there (Aliyun SMS_…, Tencent TemplateId). */
  provider: text('provider'),
  providerRef: text('provider_ref'),
  submittedAt: timestamp('submitted_at', { withTimezone: true }),
  reviewedAt: timestamp('reviewed_at', { withTimezone: true }),
  createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
  createdAt: createdAt(),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A project's SMS provider: the development outbox (the default, no network), Aliyun or Tencent
 * Cloud. Credentials are encrypted with the app secret (lib/secret-box.ts) and never leave the server.
 */
export const smsSettings = pgTable('sms_settings', {
  projectId: text('project_id')
    .primaryKey()
    .references(() => projects.id, { onDelete: 'cascade' }),
  provider: text('provider', { enum: ['outbox', 'aliyun', 'tencent'] })
    .notNull()
    .default('outbox'),
  credentialsEncrypted: text('credentials_encrypted').notNull().default(''),
  /** Non-secret provider settings (region, SmsSdkAppId, endpoint) as the console shows them. */
  providerSettings: jsonb('provider_settings').notNull().default({}),
  /** SMS to one number per China day across the project (0: no cap). */
  dailyCapPerNumber: integer('daily_cap_per_number').notNull().default(5),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/** 签名: shown as 【name】 at the head of every SMS. */
export const smsSignatures = pgTable(
  'sms_signatures',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    source: text('source', {
      enum: ['enterprise', 'app', 'website', 'official_account', 'mini_program', 'trademark'],
    }).notNull(),
    remark: text('remark').notNull().default(''),
    /** The proof file (营业执照, App 截图 …) kept under DATA_DIR; its name as uploaded. */
    proofPath: text('proof_path'),
    proofName: text('proof_name'),
    ...smsReviewColumns(),
  },
  (t) => [uniqueIndex('sms_signatures_project_name_idx').on(t.projectId, t.name)],
);

/** 模板: typed, with ${name} variables, reviewed before use. */
export const smsTemplates = pgTable(
  'sms_templates',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    name: text('name').notNull(),
    type: text('type', { enum: ['verification', 'notification', 'marketing'] }).notNull(),
    content: text('content').notNull(),
    /** The ${name} variables in order of first appearance. */
    variables: text('variables').array().notNull().default([]),
    remark: text('remark').notNull().default(''),
    ...smsReviewColumns(),
  },
  (t) => [index('sms_templates_project_idx').on(t.projectId, t.createdAt)],
);

/** A batch send (批量发送) from an uploaded list, with its rejected rows kept for download. */
export const smsBatches = pgTable(
  'sms_batches',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    signatureId: text('signature_id').notNull(),
    templateId: text('template_id').notNull(),
    fileName: text('file_name').notNull().default(''),
    total: integer('total').notNull().default(0),
    accepted: integer('accepted').notNull().default(0),
    rejected: integer('rejected').notNull().default(0),
    /** Each rejected row: its row number, phone as given and the reason, in Chinese. */
    rejects: jsonb('rejects').notNull().default([]),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
  },
  (t) => [index('sms_batches_project_idx').on(t.projectId, t.createdAt)],
);

/** 跟进规则: after a call of an assistant or a task, send a template with the call's variables. */
export const smsFollowUpRules = pgTable(
  'sms_follow_up_rules',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    ownerType: text('owner_type', { enum: ['assistant', 'task'] }).notNull(),
    ownerId: text('owner_id').notNull(),
    /** 'grade': the call's grade is in `grades`; 'requested': the assistant asked to send (send_sms). */
    trigger: text('trigger', { enum: ['grade', 'requested'] }).notNull(),
    grades: text('grades').array().notNull().default([]),
    signatureId: text('signature_id').notNull(),
    templateId: text('template_id').notNull(),
    /** Template variable → where its value comes from (a call variable, the contact's name …). */
    variableMap: jsonb('variable_map').notNull().default({}),
    enabled: boolean('enabled').notNull().default(true),
    createdAt: createdAt(),
  },
  (t) => [index('sms_follow_up_rules_owner_idx').on(t.projectId, t.ownerType, t.ownerId)],
);

/**
 * Every SMS is a record: recipient, signature and template as they were, the rendered text and its
 * billed parts, the provider's id, and the status timeline (已提交 → 运营商已接收 → 成功 / 失败).
 */
export const smsMessages = pgTable(
  'sms_messages',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    phone: text('phone').notNull(),
    signatureId: text('signature_id'),
    signatureName: text('signature_name').notNull(),
    templateId: text('template_id'),
    templateName: text('template_name').notNull(),
    templateType: text('template_type', { enum: ['verification', 'notification', 'marketing'] }).notNull(),
    variables: jsonb('variables').notNull().default({}),
    content: text('content').notNull(),
    parts: integer('parts').notNull().default(1),
    provider: text('provider', { enum: ['outbox', 'aliyun', 'tencent'] }).notNull(),
    providerMessageId: text('provider_message_id'),
    /**
     * queued (待发送), waiting (推广: outside 08:00–20:00, sends at send_after), submitted (已提交),
     * accepted (运营商已接收), delivered (成功), failed (失败), blocked (未发送: do-not-disturb,
     * daily cap, opted out).
     */
    status: text('status', {
      enum: ['queued', 'waiting', 'submitted', 'accepted', 'delivered', 'failed', 'blocked'],
    })
      .notNull()
      .default('queued'),
    errorCode: text('error_code'),
    errorMessage: text('error_message'),
    /** [{ status, at, detail }] in order. */
    timeline: jsonb('timeline').notNull().default([]),
    attempts: integer('attempts').notNull().default(0),
    sendAfter: timestamp('send_after', { withTimezone: true }).notNull().defaultNow(),
    /** Lease of the sending worker (claimed with SKIP LOCKED). */
    leaseUntil: timestamp('lease_until', { withTimezone: true }),
    source: text('source', { enum: ['single', 'batch', 'follow_up', 'assistant', 'flow', 'api'] }).notNull(),
    callId: text('call_id'),
    taskId: text('task_id'),
    batchId: text('batch_id'),
    ruleId: text('rule_id'),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: createdAt(),
    submittedAt: timestamp('submitted_at', { withTimezone: true }),
    finishedAt: timestamp('finished_at', { withTimezone: true }),
  },
  (t) => [
    index('sms_messages_project_created_idx').on(t.projectId, t.createdAt, t.id),
    index('sms_messages_project_phone_idx').on(t.projectId, t.phone, t.createdAt),
    // 发送记录 filtered by status or template within a range (bench sms-records: 373 ms → 20 ms p95 at 1M).
    index('sms_messages_project_status_idx').on(t.projectId, t.status, t.createdAt),
    index('sms_messages_project_template_idx').on(t.projectId, t.templateId, t.createdAt),
    index('sms_messages_provider_id_idx').on(t.provider, t.providerMessageId),
    index('sms_messages_due_idx').on(t.sendAfter).where(sql`${t.status} in ('queued', 'waiting')`),
    index('sms_messages_call_idx').on(t.callId),
    // One SMS per follow-up rule and call, even when two analyses of the call finish together.
    uniqueIndex('sms_messages_call_rule_idx')
      .on(t.callId, t.ruleId)
      .where(sql`${t.callId} is not null and ${t.ruleId} is not null`),
  ],
);

/** 免打扰: numbers that replied T/TD/退订/R or were added by hand; no SMS goes to them. */
export const smsOptOuts = pgTable(
  'sms_opt_outs',
  {
    projectId: projectRef(),
    phone: text('phone').notNull(),
    source: text('source', { enum: ['reply', 'manual', 'api'] }).notNull(),
    /** The reply that opted out, as received. */
    reply: text('reply').notNull().default(''),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.phone] })],
);

/** Texts recipients sent back (上行). */
export const smsReplies = pgTable(
  'sms_replies',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    phone: text('phone').notNull(),
    content: text('content').notNull(),
    provider: text('provider').notNull(),
    receivedAt: timestamp('received_at', { withTimezone: true }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('sms_replies_project_idx').on(t.projectId, t.receivedAt)],
);

/**
 * Invitations to a project by e-mail. Only the SHA-256 of the link's token is kept; a link
 * is good for 7 days and once.
 */
export const projectInvitations = pgTable(
  'project_invitations',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    email: text('email').notNull(),
    role: text('role', { enum: ['admin', 'member', 'readonly'] }).notNull(),
    tokenHash: text('token_hash').notNull(),
    invitedBy: text('invited_by')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: createdAt(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    acceptedAt: timestamp('accepted_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (t) => [
    uniqueIndex('project_invitations_token_key').on(t.tokenHash),
    index('project_invitations_project_idx').on(t.projectId, t.createdAt),
  ],
);

/**
 * Who did what, when and from where. Append-only: no route updates or deletes a row; the
 * retention sweep removes rows older than 180 days. project_id is null for account events
 * (logins). No foreign keys, so the trail outlives a removed member or user.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: text('id').primaryKey(),
    projectId: text('project_id'),
    userId: text('user_id'),
    /** The actor's e-mail at the time, kept as text so the entry reads the same later. */
    actor: text('actor').notNull().default(''),
    action: text('action').notNull(),
    targetType: text('target_type').notNull().default(''),
    targetId: text('target_id').notNull().default(''),
    /** A short human summary (Chinese), e.g. the target's name or the old → new role. */
    summary: text('summary').notNull().default(''),
    detail: jsonb('detail').$type<Record<string, unknown>>().notNull().default({}),
    ip: text('ip').notNull().default(''),
    createdAt: createdAt(),
  },
  (t) => [
    index('audit_log_project_idx').on(t.projectId, t.createdAt),
    index('audit_log_user_idx').on(t.userId, t.createdAt),
    index('audit_log_created_idx').on(t.createdAt),
  ],
);

/** Fixed-window hit counters for @fastify/rate-limit when several processes share PostgreSQL. */
export const rateLimitHits = pgTable('rate_limit_hits', {
  key: text('key').primaryKey(),
  hits: integer('hits').notNull(),
  resetAt: timestamp('reset_at', { withTimezone: true }).notNull(),
});

/**
 * 发布审核: a frozen snapshot of an assistant's or flow's draft submitted for publishing. Approving
 * publishes the snapshot (not the draft as it is by then); at most one pending review per target.
 */
export const publishReviews = pgTable(
  'publish_reviews',
  {
    id: text('id').primaryKey(),
    projectId: projectRef(),
    kind: text('kind', { enum: ['assistant', 'flow'] }).notNull(),
    targetId: text('target_id').notNull(),
    /** The target's name when submitted, so the list reads well after a rename or delete. */
    targetName: text('target_name').notNull(),
    status: text('status', { enum: ['pending', 'approved', 'rejected', 'withdrawn'] }).notNull(),
    /** assistant: { name, use, config, draftRevision }; flow: { graph }. */
    snapshot: jsonb('snapshot').notNull(),
    /** The live version when submitted, the diff's left side. */
    baseVersion: integer('base_version'),
    note: text('note').notNull().default(''),
    submittedBy: text('submitted_by').references(() => users.id, { onDelete: 'set null' }),
    submittedAt: timestamp('submitted_at', { withTimezone: true }).notNull().defaultNow(),
    decidedBy: text('decided_by').references(() => users.id, { onDelete: 'set null' }),
    decidedAt: timestamp('decided_at', { withTimezone: true }),
    comment: text('comment').notNull().default(''),
    publishedVersion: integer('published_version'),
  },
  (t) => [
    index('publish_reviews_project_idx').on(t.projectId, t.status, t.submittedAt),
    uniqueIndex('publish_reviews_one_pending_key').on(t.kind, t.targetId).where(sql`status = 'pending'`),
  ],
);
