import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  email as emailSchema,
  normalizePhone,
  OEM_LOGO_MAX_BYTES,
  type ProjectRole,
  password as passwordSchema,
  phone as phoneSchema,
  projectRole,
  SMS_TEMPLATE_TYPE_LABELS,
} from '@callpilot/contracts';
import { and, asc, desc, eq } from 'drizzle-orm';
import { BackupError, backupEmbedded, restoreEmbedded } from '../db/backup';
import type { DatabaseHandle } from '../db/client';
import { openFromEnv } from '../db/open';
import {
  memberships,
  oemConfigs,
  outbox,
  projectLimits,
  projects,
  sessions,
  smsSignatures,
  smsTemplates,
  users,
} from '../db/schema';
import { EnvError, parseEnv } from '../env';
import { hashPassword } from '../modules/auth/password';
import { revokedProject, revokedUser, SESSION_REVOKED_CHANNEL } from '../modules/auth/session-cache';
import { ensureDemo } from '../modules/demo/demo.service';
import { decideReview, type SmsReviewKind } from '../modules/sms/sms-review.service';
import { type OutboxEntry, outboxFile } from '../providers';

const HELP = `Usage: npm run admin -- <command> [options]

Commands:
  migrate                  create the database if needed and apply pending migrations
  users                    list users, their projects and roles
  user:create --email E --password P [--name N] [--project NAME | --no-project] [--role owner|admin|member|readonly]
                           create a user. --project joins the one project of that name, or creates it;
                           without it a project "<name>的项目" is created; --role defaults to owner
                           (member when joining an existing project)
  user:set-password --email E --password P
                           set a user's password and end all their sessions
  project:update --owner E [--disabled true|false] [--has-balance true|false]
                 [--assistant-limit N] [--knowledge-limit N] [--tts-clone-limit N]
                 [--concurrent-callin N] [--concurrent-callout N] [--balance FEN]
                           change the first project owned by E: switch it off or on, and set its
                           limits and balance (non-negative whole numbers; the balance in fen)
  oem:set --host H --name N [--logo FILE] [--off]
                           white-label the console on host H: product name N and a logo
                           (png, jpeg, gif, webp or svg, at most 200 KB); --off switches it off
  outbox [--to TARGET]     e-mail and SMS kept by the development outbox, newest first
                           (works while the server runs, from DATA_DIR/outbox.jsonl)
  sms:review [--signature ID | --template ID] [--approve | --reject REASON]
                           SMS signatures and templates waiting for review (development outbox):
                           without an id, lists them; with one, approves it or rejects it with a reason
  demo                     create the demo project if its user does not exist yet
  backup FILE              copy the embedded database to FILE (a new file; the server must be stopped)
  restore FILE             replace the embedded database with the one in FILE (the server must be
                           stopped); the current one is kept beside it in DATA_DIR

Runs on the same DATA_DIR / DATABASE_URL as the server. The embedded database (PGlite) is
single-process: stop the server before using these commands on it (except outbox).
On PostgreSQL, back up with pg_dump and restore with pg_restore instead of backup / restore.
`;

class UsageError extends Error {}

/** `backup` / `restore`: the embedded database as files, with no migration or other write first. */
async function backupCommand(
  command: 'backup' | 'restore',
  file: string | undefined,
  env: ReturnType<typeof parseEnv>,
) {
  if (!file) throw new UsageError(`missing the file: npm run admin -- ${command} FILE`);
  if (env.DATABASE_URL) {
    throw new UsageError(
      `${command} is for the embedded database; with DATABASE_URL use ${command === 'backup' ? 'pg_dump' : 'pg_restore'} (see the README)`,
    );
  }
  const target = path.resolve(file);
  if (command === 'backup') {
    const { bytes } = await backupEmbedded(env.dataDir, target);
    return (
      `backed up the database of ${env.dataDir} to ${target} (${(bytes / 1024 / 1024).toFixed(1)} MB)\n` +
      `recordings (${path.join(env.dataDir, 'recordings')}) and the server secret (APP_SECRET or ` +
      `${path.join(env.dataDir, 'app-secret')}) are not in it: copy them too`
    );
  }
  const { previous } = await restoreEmbedded(env.dataDir, target);
  return previous
    ? `restored ${target} into ${env.dataDir}; the previous database is kept in ${previous} (delete it once you are sure)`
    : `restored ${target} into ${env.dataDir}`;
}

function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`missing ${flag}`);
  return value;
}

function check<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { message: string }[] } };
  },
  value: unknown,
  flag: string,
): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new UsageError(`${flag}: ${r.error.issues[0]?.message}`);
  return r.data;
}

function bool(value: string, flag: string): boolean {
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new UsageError(`${flag} must be true or false`);
}

const MAX_INT = 2_147_483_647;

function count(value: string, flag: string): number {
  if (!/^\d+$/.test(value) || Number(value) > MAX_INT) {
    throw new UsageError(`${flag} must be a non-negative whole number (got "${value}")`);
  }
  return Number(value);
}

const HOST = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/;

/** Image type by its first bytes, never by the file name. */
function imageType(bytes: Buffer): string | undefined {
  if (bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])))
    return 'image/png';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  const head = bytes.subarray(0, 12).toString('latin1');
  if (head.startsWith('GIF87a') || head.startsWith('GIF89a')) return 'image/gif';
  if (head.startsWith('RIFF') && head.slice(8, 12) === 'WEBP') return 'image/webp';
  const text = bytes
    .subarray(0, 1024)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE svg[^>]*>\s*)?<svg[\s>]/i.test(text))
    return 'image/svg+xml';
  return undefined;
}

function readLogo(file: string): string {
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch (err) {
    throw new UsageError(`--logo: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (bytes.length > OEM_LOGO_MAX_BYTES) {
    throw new UsageError(`--logo: ${file} is ${Math.ceil(bytes.length / 1024)} KB; the limit is 200 KB`);
  }
  const type = imageType(bytes);
  if (!type) throw new UsageError(`--logo: ${file} is not a png, jpeg, gif, webp or svg image`);
  return `data:${type};base64,${bytes.toString('base64')}`;
}

const normaliseTarget = (to: string) =>
  emailSchema.safeParse(to).success
    ? to.toLowerCase()
    : phoneSchema.safeParse(to).success
      ? normalizePhone(to)
      : to;

function formatOutbox(entries: OutboxEntry[], to: string | undefined): string {
  const wanted = to === undefined ? undefined : normaliseTarget(to);
  const shown = entries
    .filter((e) => wanted === undefined || e.recipient === wanted)
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  if (shown.length === 0) return wanted ? `no messages to ${wanted}` : 'the outbox is empty';
  return shown
    .map((e) => {
      const body = e.body
        .split('\n')
        .map((line) => `    ${line}`)
        .join('\n');
      return `${e.createdAt}\t${e.channel}\t${e.recipient}\t${e.subject || '-'}\n${body}`;
    })
    .join('\n\n');
}

/** The JSON-lines copy of the outbox, for when the server holds the embedded database. */
function readOutboxFile(dataDir: string): OutboxEntry[] {
  let text: string;
  try {
    text = fs.readFileSync(outboxFile(dataDir), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as OutboxEntry];
      } catch {
        // A line cut short by a crash must not hide every other message.
        return [];
      }
    });
}

type Flags = { 'no-project'?: boolean; off?: boolean; approve?: boolean };

/**
 * Argument checks that need no database, done before opening it: opening and migrating the
 * embedded database takes seconds, and a typo should be answered at once.
 */
function precheck(command: string, values: Record<string, string | undefined>) {
  if (command === 'project:update') {
    need(values.owner, '--owner');
    if (values.disabled !== undefined) bool(values.disabled, '--disabled');
    if (values['has-balance'] !== undefined) bool(values['has-balance'], '--has-balance');
    for (const flag of LIMIT_FLAGS) {
      const value = values[flag[0]];
      if (value !== undefined) count(value, `--${flag[0]}`);
    }
  }
  if (command === 'oem:set') {
    const host = need(values.host, '--host').trim().toLowerCase();
    if (!HOST.test(host))
      throw new UsageError(`--host must be a host name such as call.example.com (got "${host}")`);
    if (values.logo !== undefined) readLogo(values.logo);
  }
}

const LIMIT_FLAGS = [
  ['assistant-limit', 'assistantLimit'],
  ['knowledge-limit', 'knowledgeLimit'],
  ['tts-clone-limit', 'ttsCloneLimit'],
  ['concurrent-callin', 'concurrentCallin'],
  ['concurrent-callout', 'concurrentCallout'],
  ['balance', 'balanceFen'],
] as const;

async function run(
  database: DatabaseHandle,
  command: string,
  values: Record<string, string | undefined>,
  flags: Flags,
  env: ReturnType<typeof parseEnv>,
) {
  const { db } = database;
  switch (command) {
    case 'migrate':
      return 'migrations applied';
    case 'users': {
      const rows = await db
        .select({
          email: users.email,
          name: users.displayName,
          project: projects.name,
          role: memberships.role,
          disabled: projects.disabled,
        })
        .from(users)
        .leftJoin(memberships, eq(memberships.userId, users.id))
        .leftJoin(projects, eq(projects.id, memberships.projectId))
        .orderBy(users.email);
      return rows
        .map((r) =>
          [r.email, r.name, r.project ?? '-', r.role ?? '-', r.disabled ? 'disabled' : ''].join('\t'),
        )
        .join('\n');
    }
    case 'user:create': {
      const email = check(emailSchema, need(values.email, '--email'), '--email').toLowerCase();
      const password = check(passwordSchema, need(values.password, '--password'), '--password');
      const role = values.role ?? undefined;
      if (role !== undefined && !projectRole.options.includes(role as ProjectRole)) {
        throw new UsageError('--role must be owner, admin, member or readonly');
      }
      if (values.project !== undefined && flags['no-project']) {
        throw new UsageError('use either --project or --no-project, not both');
      }
      const displayName = values.name ?? email.split('@')[0]!;
      const userId = randomUUID();
      const passwordHash = await hashPassword(password);
      const outcome = await db.transaction(async (tx) => {
        const inserted = await tx
          .insert(users)
          .values({ id: userId, email, passwordHash, displayName })
          .onConflictDoNothing()
          .returning({ id: users.id });
        if (inserted.length === 0) throw new UsageError(`a user with e-mail ${email} already exists`);
        if (flags['no-project']) return 'without a project';
        const projectName = values.project ?? `${displayName}的项目`;
        const same = values.project
          ? await tx.select({ id: projects.id }).from(projects).where(eq(projects.name, projectName))
          : [];
        if (same.length > 1) {
          throw new UsageError(
            `${same.length} projects are named "${projectName}"; cannot tell which to join`,
          );
        }
        const joined = same[0];
        const projectId = joined?.id ?? randomUUID();
        if (!joined) {
          await tx.insert(projects).values({ id: projectId, name: projectName });
          await tx.insert(projectLimits).values({ projectId });
        }
        const memberRole = (role ?? (joined ? 'member' : 'owner')) as ProjectRole;
        await tx.insert(memberships).values({ projectId, userId, role: memberRole });
        return `${joined ? 'joining' : 'with new'} project "${projectName}" (${projectId}) as ${memberRole}`;
      });
      return `created user ${email} ${outcome}`;
    }
    case 'user:set-password': {
      const email = need(values.email, '--email').toLowerCase();
      const password = check(passwordSchema, need(values.password, '--password'), '--password');
      const [user] = await db
        .update(users)
        .set({ passwordHash: await hashPassword(password), updatedAt: new Date() })
        .where(eq(users.email, email))
        .returning({ id: users.id });
      if (!user) throw new UsageError(`no user with e-mail ${email}`);
      // A reset password must lock out whoever held the old one.
      await db.delete(sessions).where(eq(sessions.userId, user.id));
      await database.notify(SESSION_REVOKED_CHANNEL, revokedUser(user.id));
      return `password set for ${email}; their sessions were ended`;
    }
    case 'project:update': {
      const owner = need(values.owner, '--owner').toLowerCase();
      const [project] = await db
        .select({ id: projects.id, name: projects.name })
        .from(memberships)
        .innerJoin(users, eq(users.id, memberships.userId))
        .innerJoin(projects, eq(projects.id, memberships.projectId))
        .where(and(eq(users.email, owner), eq(memberships.role, 'owner')))
        .orderBy(asc(memberships.createdAt))
        .limit(1);
      if (!project) throw new UsageError(`${owner} owns no project`);
      const changes: Partial<typeof projects.$inferInsert> = {};
      if (values.disabled !== undefined) changes.disabled = bool(values.disabled, '--disabled');
      const limits: Partial<typeof projectLimits.$inferInsert> = {};
      if (values['has-balance'] !== undefined)
        limits.hasBalance = bool(values['has-balance'], '--has-balance');
      for (const [flag, column] of LIMIT_FLAGS) {
        const value = values[flag];
        if (value !== undefined) limits[column] = count(value, `--${flag}`);
      }
      if (Object.keys(changes).length + Object.keys(limits).length === 0)
        throw new UsageError('nothing to change: give at least one option');
      await db.transaction(async (tx) => {
        if (Object.keys(changes).length > 0) {
          await tx.update(projects).set(changes).where(eq(projects.id, project.id));
        }
        if (Object.keys(limits).length > 0) {
          await tx
            .insert(projectLimits)
            .values({ projectId: project.id, ...limits })
            .onConflictDoUpdate({
              target: projectLimits.projectId,
              set: { ...limits, updatedAt: new Date() },
            });
        }
      });
      // Running servers keep users' project lists briefly; a disabled flag must reach them now.
      if (Object.keys(changes).length > 0) {
        await database.notify(SESSION_REVOKED_CHANNEL, revokedProject(project.id));
      }
      return `project "${project.name}" (${project.id}) updated: ${JSON.stringify({ ...changes, ...limits })}`;
    }
    case 'oem:set': {
      const host = need(values.host, '--host').trim().toLowerCase();
      if (!HOST.test(host))
        throw new UsageError(`--host must be a host name such as call.example.com (got "${host}")`);
      const name = values.name?.trim();
      if (name !== undefined && (name.length === 0 || name.length > 50)) {
        throw new UsageError('--name must be 1 to 50 characters');
      }
      const logo = values.logo === undefined ? undefined : readLogo(values.logo);
      const enabled = !flags.off;
      const [existing] = await db.select().from(oemConfigs).where(eq(oemConfigs.host, host)).limit(1);
      if (!existing && name === undefined) throw new UsageError('missing --name');
      const set = {
        enabled,
        name: name ?? existing!.name,
        ...(logo !== undefined ? { logo } : {}),
        updatedAt: new Date(),
      };
      await db
        .insert(oemConfigs)
        .values({ host, ...set })
        .onConflictDoUpdate({ target: oemConfigs.host, set });
      const logoNote =
        logo !== undefined ? `, logo ${values.logo} (${Math.ceil((logo.length * 3) / 4 / 1024)} KB)` : '';
      return enabled
        ? `white-label on for ${host}: name "${set.name}"${logoNote}`
        : `white-label off for ${host} (name "${set.name}" kept)${logoNote}`;
    }
    case 'outbox': {
      const rows = await db.select().from(outbox).orderBy(desc(outbox.createdAt));
      return formatOutbox(
        rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() })),
        values.to,
      );
    }
    case 'sms:review': {
      const now = Date.now();
      if (!values.signature && !values.template) {
        const pending = async (kind: SmsReviewKind) => {
          const table = kind === 'signature' ? smsSignatures : smsTemplates;
          const rows = await db
            .select({ row: table, project: projects.name })
            .from(table)
            .innerJoin(projects, eq(projects.id, table.projectId))
            .where(eq(table.status, 'reviewing'))
            .orderBy(asc(table.submittedAt));
          return rows.map(({ row, project }) => {
            const what =
              'content' in row
                ? `${SMS_TEMPLATE_TYPE_LABELS[row.type]}\t${row.content}`
                : `【${row.name}】\t${row.proofPath ?? '无证明材料'}`;
            return [kind, row.id, project, row.name, row.submittedAt?.toISOString() ?? '-', what].join('\t');
          });
        };
        const lines = [...(await pending('signature')), ...(await pending('template'))];
        return lines.length ? lines.join('\n') : 'nothing is waiting for review';
      }
      if (values.signature && values.template) throw new UsageError('give either --signature or --template');
      if (Boolean(flags.approve) === (values.reject !== undefined))
        throw new UsageError('give either --approve or --reject REASON');
      const kind: SmsReviewKind = values.signature ? 'signature' : 'template';
      const id = (values.signature ?? values.template) as string;
      const row = await decideReview(
        db,
        kind,
        id,
        flags.approve ? { approve: true } : { approve: false, reason: values.reject ?? '' },
        now,
      );
      return `${kind} "${row.name}" (${row.id}) ${flags.approve ? 'approved' : `rejected: ${row.rejectReason}`}`;
    }
    case 'demo': {
      const r = await ensureDemo(db, { email: env.demoEmail, password: env.DEMO_PASSWORD });
      if (!r.created) return `demo user ${r.email} already exists`;
      return r.generatedPassword
        ? `demo created: ${r.email} / ${r.generatedPassword}`
        : `demo created: ${r.email} (DEMO_PASSWORD)`;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

async function main() {
  const { positionals, values } = parseArgs({
    strict: true,
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      project: { type: 'string' },
      'no-project': { type: 'boolean' },
      role: { type: 'string' },
      owner: { type: 'string' },
      disabled: { type: 'string' },
      'has-balance': { type: 'string' },
      'assistant-limit': { type: 'string' },
      'knowledge-limit': { type: 'string' },
      'tts-clone-limit': { type: 'string' },
      'concurrent-callin': { type: 'string' },
      'concurrent-callout': { type: 'string' },
      balance: { type: 'string' },
      host: { type: 'string' },
      logo: { type: 'string' },
      off: { type: 'boolean' },
      to: { type: 'string' },
      signature: { type: 'string' },
      template: { type: 'string' },
      approve: { type: 'boolean' },
      reject: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (!command || values.help) {
    process.stdout.write(HELP);
    return;
  }
  const env = parseEnv();
  if (command === 'backup' || command === 'restore') {
    process.stdout.write(`${await backupCommand(command, positionals[1], env)}\n`);
    return;
  }
  const { 'no-project': noProject, off, approve, help: _help, ...strings } = values;
  precheck(command, strings);
  let database: DatabaseHandle;
  try {
    database = await openFromEnv(env);
  } catch (err) {
    // The running server holds the embedded database; the outbox has a file copy for this.
    if (
      command === 'outbox' &&
      !env.DATABASE_URL &&
      /is in use by another server process/.test(String(err))
    ) {
      process.stderr.write(
        `admin: the database is in use by the running server; reading ${outboxFile(env.dataDir)} instead\n`,
      );
      process.stdout.write(`${formatOutbox(readOutboxFile(env.dataDir), values.to)}\n`);
      return;
    }
    throw err;
  }
  try {
    await database.migrate();
    process.stdout.write(
      `${await run(database, command, strings, { 'no-project': noProject, off, approve }, env)}\n`,
    );
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  if (err instanceof EnvError) process.stderr.write(`${err.lines.join('\n')}\n`);
  else if (err instanceof BackupError) process.stderr.write(`admin: ${err.message}\n`);
  else if (err instanceof UsageError || String(err?.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`admin: ${err.message}\n\n${HELP}`);
  } else process.stderr.write(`admin: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
