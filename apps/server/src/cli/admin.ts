import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { email as emailSchema, password as passwordSchema } from '@callpilot/contracts';
import { and, asc, eq } from 'drizzle-orm';
import type { DatabaseHandle } from '../db/client';
import { openFromEnv } from '../db/open';
import { memberships, projects, sessions, users } from '../db/schema';
import { EnvError, parseEnv } from '../env';
import { hashPassword } from '../modules/auth/password';
import { revokedUser, SESSION_REVOKED_CHANNEL } from '../modules/auth/session-cache';
import { ensureDemo } from '../modules/demo/demo.service';

const HELP = `Usage: npm run admin -- <command> [options]

Commands:
  migrate                  create the database if needed and apply pending migrations
  users                    list users, their projects and roles
  user:create --email E --password P [--name N] [--project NAME | --no-project] [--role owner|admin|member]
                           create a user. --project joins the one project of that name, or creates it;
                           without it a project "<name>的项目" is created; --role defaults to owner
                           (member when joining an existing project)
  user:set-password --email E --password P
                           set a user's password and end all their sessions
  project:update --owner E [--disabled true|false]
                           change the first project owned by E
  demo                     create the demo project if its user does not exist yet

Runs on the same DATA_DIR / DATABASE_URL as the server. The embedded database (PGlite) is
single-process: stop the server before using these commands on it.
`;

class UsageError extends Error {}

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

type Flags = { 'no-project'?: boolean };

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
      if (role !== undefined && !['owner', 'admin', 'member'].includes(role)) {
        throw new UsageError('--role must be owner, admin or member');
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
        if (!joined) await tx.insert(projects).values({ id: projectId, name: projectName });
        const memberRole = (role ?? (joined ? 'member' : 'owner')) as 'owner' | 'admin' | 'member';
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
      if (Object.keys(changes).length === 0)
        throw new UsageError('nothing to change: give at least one option');
      await db.update(projects).set(changes).where(eq(projects.id, project.id));
      return `project "${project.name}" (${project.id}) updated: ${JSON.stringify(changes)}`;
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
      help: { type: 'boolean', short: 'h' },
    },
  });
  const command = positionals[0];
  if (!command || values.help) {
    process.stdout.write(HELP);
    return;
  }
  const env = parseEnv();
  const database = await openFromEnv(env);
  try {
    await database.migrate();
    const { 'no-project': noProject, help: _help, ...strings } = values;
    process.stdout.write(`${await run(database, command, strings, { 'no-project': noProject }, env)}\n`);
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  if (err instanceof EnvError) process.stderr.write(`${err.lines.join('\n')}\n`);
  else if (err instanceof UsageError || String(err?.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`admin: ${err.message}\n\n${HELP}`);
  } else process.stderr.write(`admin: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
