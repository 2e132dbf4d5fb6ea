import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { email as emailSchema, password as passwordSchema } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import type { Database } from '../db/client';
import { openFromEnv } from '../db/open';
import { memberships, projects, sessions, users } from '../db/schema';
import { EnvError, parseEnv } from '../env';
import { hashPassword } from '../modules/auth/password';
import { ensureDemo } from '../modules/demo/demo.service';

const HELP = `Usage: npm run admin -- <command> [options]

Commands:
  migrate                                   apply pending database migrations
  users                                     list users and their projects
  create-user --email E --password P [--name N] [--project NAME]
                                            create a user; with --project, also a project they own
  set-password --email E --password P       set a user's password and end their sessions
  project-disable --id ID | project-enable --id ID
                                            disable or re-enable a project
  demo                                      create the demo project if its user does not exist yet

The embedded database (PGlite) is single-process: stop the server before using these on it.
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

async function run(
  db: Database,
  command: string,
  values: Record<string, string | undefined>,
  env: ReturnType<typeof parseEnv>,
) {
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
    case 'create-user': {
      const email = check(emailSchema, need(values.email, '--email'), '--email').toLowerCase();
      const password = check(passwordSchema, need(values.password, '--password'), '--password');
      const userId = randomUUID();
      await db.transaction(async (tx) => {
        const inserted = await tx
          .insert(users)
          .values({
            id: userId,
            email,
            passwordHash: await hashPassword(password),
            displayName: values.name ?? email.split('@')[0]!,
          })
          .onConflictDoNothing()
          .returning({ id: users.id });
        if (inserted.length === 0) throw new UsageError(`a user with e-mail ${email} already exists`);
        if (values.project) {
          const projectId = randomUUID();
          await tx.insert(projects).values({ id: projectId, name: values.project });
          await tx.insert(memberships).values({ projectId, userId, role: 'owner' });
        }
      });
      return `created ${email}${values.project ? ` owning project "${values.project}"` : ''}`;
    }
    case 'set-password': {
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
      return `password set for ${email}; their sessions were ended`;
    }
    case 'project-disable':
    case 'project-enable': {
      const id = need(values.id, '--id');
      const [row] = await db
        .update(projects)
        .set({ disabled: command === 'project-disable' })
        .where(eq(projects.id, id))
        .returning({ name: projects.name });
      if (!row) throw new UsageError(`no project with id ${id}`);
      return `project "${row.name}" ${command === 'project-disable' ? 'disabled' : 'enabled'}`;
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
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      password: { type: 'string' },
      name: { type: 'string' },
      project: { type: 'string' },
      id: { type: 'string' },
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
    process.stdout.write(
      `${await run(database.db, command, values as Record<string, string | undefined>, env)}\n`,
    );
  } finally {
    await database.close();
  }
}

main().catch((err) => {
  if (err instanceof EnvError) process.stderr.write(`${err.lines.join('\n')}\n`);
  else if (err instanceof UsageError) process.stderr.write(`admin: ${err.message}\n\n${HELP}`);
  else process.stderr.write(`admin: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
