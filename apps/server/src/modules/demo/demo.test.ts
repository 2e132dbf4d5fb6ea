import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, createTestDatabase, loginAs } from '../../../test/helpers';
import type { DatabaseHandle } from '../../db/client';
import { assistants, knowledgeDocuments, memberships, projects, users } from '../../db/schema';
import { verifyPassword } from '../auth/password';
import { drainKnowledgeQueue } from '../knowledge/worker';
import { DEMO_PROJECT_NAME, ensureDemo } from './demo.service';
import { DEMO_FAQ_FILE } from './demo-content';

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

  it('gives the demo project template assistants and a real FAQ the test chat answers from', async () => {
    const { app, db } = await createTestApp();
    try {
      await ensureDemo(db, { email: 'demo@example.com', password: 'demo-pass-1' });
      const made = await db.select().from(assistants);
      expect(made.map((a) => a.templateKey).sort()).toEqual([
        'appointment-reminder',
        'customer-follow-up',
        'event-invitation',
      ]);
      expect(made.filter((a) => a.publishedVersion === 1).map((a) => a.name)).toEqual(['宽带客户回访']);
      const [document] = await db.select().from(knowledgeDocuments);
      expect(document).toMatchObject({ fileName: DEMO_FAQ_FILE, fileType: 'md', status: 'queued' });
      await drainKnowledgeQueue(db);
      const [indexed] = await db.select().from(knowledgeDocuments);
      expect(indexed).toMatchObject({ status: 'ready' });
      expect(indexed!.segmentCount).toBeGreaterThan(5);

      const headers = await loginAs(app, 'demo@example.com', 'demo-pass-1');
      const [project] = await db.select().from(projects);
      const broadband = made.find((a) => a.name === '宽带客户回访')!;
      const list = await app.inject({
        method: 'GET',
        url: `/api/project/${project!.id}/assistants`,
        headers,
      });
      expect(list.json().data.total).toBe(3);
      const chat = await app.inject({
        method: 'POST',
        url: `/api/project/${project!.id}/assistants/${broadband.id}/test-chat`,
        headers,
        payload: { messages: [{ role: 'user', content: '我下个月搬家，宽带移机要收费吗？' }], version: 1 },
      });
      const events = chat.body
        .split('\n\n')
        .filter(Boolean)
        .map((block) => JSON.parse(block.slice('data: '.length)));
      expect(events[0].type).toBe('segments');
      expect(events[0].segments[0].documentName).toBe(DEMO_FAQ_FILE);
      expect(events.at(-1)).toMatchObject({ type: 'done', mode: 'script' });
      expect(events.at(-1).reply).toContain('同城移机免收移机费');
    } finally {
      await app.close();
    }
  });
});
