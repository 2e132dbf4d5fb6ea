import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, tableCounts } from '../../../test/helpers';
import { memberships, projectLimits, projects } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

describe('project routes', () => {
  it('serves balance, limits and members to members only, and hides other projects', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const a = await seedUser(db, { email: 'a@example.com', project: '甲项目' });
    const b = await seedUser(db, { email: 'b@example.com', project: '乙项目' });
    await db
      .update(projectLimits)
      .set({ balanceFen: 12_345, hasBalance: true, assistantLimit: 3, concurrentCallout: 10 })
      .where(eq(projectLimits.projectId, a.projectId));
    const asA = await loginAs(app, 'a@example.com');

    const limit = await app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/balance-limit`,
      headers: asA,
    });
    expect(limit.json().data).toEqual({
      assistantLimit: 3,
      knowledgeLimit: 0,
      ttsCloneLimit: 0,
      hasBalance: true,
      concurrentCallin: 0,
      concurrentCallout: 10,
    });
    const balance = await app.inject({
      method: 'POST',
      url: `/api/project/${a.projectId}/balance`,
      headers: asA,
    });
    expect(balance.json().data).toEqual({ balanceFen: 12_345, hasBalance: true });
    // Browsers' clients often label a bodyless POST as JSON; that is not a malformed body.
    const labelled = await app.inject({
      method: 'POST',
      url: `/api/project/${a.projectId}/balance`,
      headers: { ...asA, 'content-type': 'application/json' },
    });
    expect(labelled.statusCode).toBe(200);
    const members = await app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/members`,
      headers: asA,
    });
    expect(members.json().data).toMatchObject([{ email: 'a@example.com', role: 'owner', userId: a.userId }]);

    const before = await tableCounts(db);
    for (const [method, path] of [
      ['GET', 'balance-limit'],
      ['POST', 'balance'],
      ['GET', 'members'],
    ] as const) {
      for (const projectId of [b.projectId, 'no-such-project', "' OR 1=1 --", '<script>']) {
        const res = await app.inject({
          method,
          url: `/api/project/${encodeURIComponent(projectId)}/${path}`,
          headers: asA,
        });
        expect(res.statusCode, `${method} ${path} ${projectId}`).toBe(403);
        expect(res.json()).toMatchObject({ success: false, code: 'FORBIDDEN', message: '无权访问该项目' });
      }
      const anonymous = await app.inject({ method, url: `/api/project/${a.projectId}/${path}` });
      expect(anonymous.statusCode).toBe(401);
    }
    expect(await tableCounts(db)).toEqual(before);
  });

  it('answers "Project is disabled" on data routes while balance and limits stay readable', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const a = await seedUser(db, { email: 'off@example.com', disabled: true });
    const headers = await loginAs(app, 'off@example.com');
    const members = await app.inject({ method: 'GET', url: `/api/project/${a.projectId}/members`, headers });
    expect(members.statusCode).toBe(403);
    expect(members.json()).toMatchObject({
      success: false,
      code: 'PROJECT_DISABLED',
      message: 'Project is disabled',
    });
    expect(
      (await app.inject({ method: 'GET', url: `/api/project/${a.projectId}/balance-limit`, headers }))
        .statusCode,
    ).toBe(200);
    expect(
      (await app.inject({ method: 'POST', url: `/api/project/${a.projectId}/balance`, headers })).statusCode,
    ).toBe(200);
    await db.update(projects).set({ disabled: false }).where(eq(projects.id, a.projectId));
    expect(
      (await app.inject({ method: 'GET', url: `/api/project/${a.projectId}/members`, headers })).statusCode,
    ).toBe(200);
  });

  it('answers defaults for a project without a limits row, and lists every member', async () => {
    current = await createTestApp();
    const { app, db } = current;
    const owner = await seedUser(db, { email: 'o@example.com' });
    const member = await seedUser(db, { email: 'm@example.com', project: null });
    await db
      .insert(memberships)
      .values({ projectId: owner.projectId, userId: member.userId, role: 'member' });
    await db.delete(projectLimits);
    const headers = await loginAs(app, 'm@example.com');
    const limit = await app.inject({
      method: 'GET',
      url: `/api/project/${owner.projectId}/balance-limit`,
      headers,
    });
    expect(limit.json().data.hasBalance).toBe(false);
    const balance = await app.inject({
      method: 'POST',
      url: `/api/project/${owner.projectId}/balance`,
      headers,
    });
    expect(balance.json().data).toEqual({ balanceFen: 0, hasBalance: false });
    const members = await app.inject({
      method: 'GET',
      url: `/api/project/${owner.projectId}/members`,
      headers,
    });
    expect(members.json().data.map((m: { role: string }) => m.role)).toEqual(['owner', 'member']);
  });
});
