import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { memberships, projects, users } from '../../db/schema';
import { verifyPassword } from '../auth/password';
import { DEMO_PROJECT_NAME, ensureDemo } from './demo.service';

let database: DatabaseHandle | undefined;
afterEach(async () => {
  await database?.close();
  database = undefined;
});

describe('ensureDemo', () => {
  it('creates the demo owner and project once, whatever other users exist', async () => {
    database = await createTestDatabase();
    const { db } = database;
    await db
      .insert(users)
      .values({ id: randomUUID(), email: 'someone@example.com', passwordHash: 'x', displayName: 'x' });

    const first = await ensureDemo(db, { email: 'demo@example.com', password: 'demo-pass-1' });
    expect(first).toEqual({ created: true, email: 'demo@example.com', generatedPassword: undefined });
    const again = await ensureDemo(db, { email: 'demo@example.com', password: 'other-pass' });
    expect(again.created).toBe(false);

    const [demo] = await db.select().from(users).where(eq(users.email, 'demo@example.com'));
    expect(await verifyPassword('demo-pass-1', demo!.passwordHash)).toBe(true);
    const owned = await db
      .select({ name: projects.name, role: memberships.role })
      .from(memberships)
      .innerJoin(projects, eq(projects.id, memberships.projectId))
      .where(eq(memberships.userId, demo!.id));
    expect(owned).toEqual([{ name: DEMO_PROJECT_NAME, role: 'owner' }]);
  });

  it('generates a password when none is configured, and it works', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const result = await ensureDemo(db, { email: 'demo@example.com' });
    expect(result.generatedPassword).toMatch(/^[A-Za-z0-9_-]{12}$/);
    const [demo] = await db.select().from(users).where(eq(users.email, 'demo@example.com'));
    expect(await verifyPassword(result.generatedPassword!, demo!.passwordHash)).toBe(true);
  });

  it('creates exactly one demo when two starts race', async () => {
    database = await createTestDatabase();
    const { db } = database;
    const results = await Promise.all([
      ensureDemo(db, { email: 'demo@example.com', password: 'demo-pass-1' }),
      ensureDemo(db, { email: 'demo@example.com', password: 'demo-pass-1' }),
    ]);
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await db.select().from(projects)).toHaveLength(1);
  });
});
