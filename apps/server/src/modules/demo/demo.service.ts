import { randomBytes, randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { memberships, projectLimits, projects, users } from '../../db/schema';
import { hashPassword } from '../auth/password';
import { seedDemoContent } from './demo-content';

export interface DemoResult {
  created: boolean;
  email: string;
  /** Present only when the password was generated here and must be shown to the operator once. */
  generatedPassword?: string;
}

export const DEMO_PROJECT_NAME = '演示项目';

/**
 * Gives a fresh installation something to log into. Keyed on the demo e-mail alone, so it
 * runs whatever other users exist and is a no-op once that user is there.
 */
export async function ensureDemo(
  db: Database,
  opts: { email: string; password?: string },
): Promise<DemoResult> {
  const email = opts.email.toLowerCase();
  const existing = await db.select({ id: users.id }).from(users).where(eq(users.email, email)).limit(1);
  if (existing.length > 0) return { created: false, email };

  const generatedPassword = opts.password ? undefined : randomBytes(9).toString('base64url');
  const passwordHash = await hashPassword(opts.password ?? generatedPassword!);
  const created = await db.transaction(async (tx) => {
    const userId = randomUUID();
    // A concurrent start may have created the user between our check and here; the unique
    // e-mail makes exactly one of us win.
    const inserted = await tx
      .insert(users)
      .values({ id: userId, email, passwordHash, displayName: '演示用户' })
      .onConflictDoNothing()
      .returning({ id: users.id });
    if (inserted.length === 0) return null;
    const projectId = randomUUID();
    await tx
      .insert(projects)
      .values({ id: projectId, name: DEMO_PROJECT_NAME, company: '演示公司', industry: '教育培训' });
    await tx.insert(memberships).values({ projectId, userId, role: 'owner' });
    await tx.insert(projectLimits).values({ projectId });
    return { projectId, userId };
  });
  if (!created) return { created: false, email };
  await seedDemoContent(db, created.projectId, created.userId);
  return { created: true, email, generatedPassword };
}
